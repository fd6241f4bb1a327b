"""Nothing leaves the machine: a real embedding run writes nothing for ONNX Runtime's vendor.

Official ONNX Runtime builds keep a device id and a queue of usage events addressed to Microsoft
in ``Microsoft/DeveloperTools/.onnxruntime`` under the user's cache folder, from the moment the
library loads, unless physgrade switches that off first (physgrade.dedup.onnx_runtime.runtime). The
run happens in a child process with a home and cache folder of its own and none of the suite's
settings, so only physgrade's own code stands between the library and those folders.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from physgrade.dedup.models import resolve
from physgrade.project import Project


def test_an_embedding_run_writes_no_telemetry_folder(tmp_path: Path, demo: Path) -> None:
    model = resolve()  # the embedded model, exported once per session into the session's cache
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    cache.mkdir()
    env = {name: value for name, value in os.environ.items()
           if name not in ("ORT_DISABLE_TELEMETRY", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    # --quantize: the quantizer loads ONNX Runtime too, and the int8 copy goes into the fresh
    # cache (the model given is outside it), so both ways in are covered.
    run = subprocess.run([sys.executable, "-m", "physgrade.cli", "embed", str(demo), "--model",
                          str(model.onnx.parent.parent), "--quantize"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "42 questions embedded" in run.stdout, run.stdout
    with Project.open(demo) as project:
        assert project.conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 42
    env["XDG_CACHE_HOME"] = str(cache)  # the library's other way to find the cache folder
    again = subprocess.run([sys.executable, "-m", "physgrade.cli", "embed", str(demo), "--model",
                            str(model.onnx)], env=env, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0, again.stderr
    written = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*"))
    assert not [path for path in written if "Microsoft" in path or "onnxruntime" in path], written
    assert (home / ".cache" / "physgrade" / "models").is_dir()  # the int8 copy: HOME was used
