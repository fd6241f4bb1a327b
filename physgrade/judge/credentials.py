"""Where the Anthropic API key comes from, decided in one place: the environment, else the
system keyring where the user asked to remember it, else a key kept for this session.

The key is never written to the project, the app's settings, a log or an export: the keyring
(the ``keyring`` package: Keychain, Windows Credential Locker, Secret Service) is the only
place it outlives the process. A system without a keyring keeps a remembered key in this
process's memory, and says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum

import keyring
from keyring.errors import KeyringError, NoKeyringError, PasswordDeleteError

KEY_VARIABLE = "ANTHROPIC_API_KEY"
#: the key's entry in the system keyring
SERVICE, USER = "physgrade", "anthropic-api-key"
NO_KEYRING = ("this system has no keyring: the key is kept for this session only; "
              f"set {KEY_VARIABLE} to keep it")


class Source(StrEnum):
    """Where a key was found, as the dialogs say it."""

    ENVIRONMENT = f"from {KEY_VARIABLE}"
    KEYRING = "from the system keyring"
    SESSION = "typed for this session"


@dataclass(frozen=True, slots=True)
class Key:
    value: str
    source: Source

    def __repr__(self) -> str:  # a key printed by accident stays secret
        return f"Key(source={self.source!r})"


#: a key remembered where no keyring could keep it: gone when the process ends
_session_key: str | None = None


def find() -> Key | None:
    """The key to call with and where it comes from (None: none set, remembered or typed)."""
    value = os.environ.get(KEY_VARIABLE, "").strip()
    if value:
        return Key(value, Source.ENVIRONMENT)
    try:
        value = (keyring.get_password(SERVICE, USER) or "").strip()
    except KeyringError:  # no keyring, or a locked one: only the session's key is left
        value = ""
    if value:
        return Key(value, Source.KEYRING)
    return Key(_session_key, Source.SESSION) if _session_key else None


def remember(value: str) -> str | None:
    """Keep ``value`` in the system keyring for the next starts; where there is none (or it
    refuses), keep it for this session. Returns what the user must be told (None: kept)."""
    global _session_key
    try:
        keyring.set_password(SERVICE, USER, value.strip())
        return None
    except NoKeyringError:
        _session_key = value.strip()
        return NO_KEYRING
    except KeyringError as exc:
        _session_key = value.strip()
        return f"the system keyring did not keep the key ({exc}): it is kept for this session only"


def remembered() -> Source | None:
    """Where a remembered key is kept (the keyring, or this session); None if none is."""
    try:
        if keyring.get_password(SERVICE, USER):
            return Source.KEYRING
    except KeyringError:
        pass
    return Source.SESSION if _session_key else None


def forget() -> str | None:
    """Forget the remembered key, in the keyring and in this session. Returns what the user
    must be told when the keyring would not let it go (None: forgotten, or never kept)."""
    global _session_key
    _session_key = None
    try:
        keyring.delete_password(SERVICE, USER)
    except (PasswordDeleteError, NoKeyringError):
        pass  # nothing was kept there
    except KeyringError as exc:  # a locked keyring, one that refuses
        return f"the system keyring did not let the key go ({exc})"
    return None


def has_keyring() -> bool:
    """Whether this system has a keyring to remember a key in (a no-op one does not count)."""
    return keyring.get_keyring().priority > 0
