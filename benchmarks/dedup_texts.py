"""Realistic physics problem statements for the near-duplicate benchmark, made deterministically.

Each text is drawn from one of many problem families (mechanics, electricity and magnetism,
thermodynamics, waves, optics, modern physics). A family has several objects, sentences in
several phrasings, several things to ask and optional facts; a frame adds a scene, an assumption
or an instruction, reorders the facts, writes quantities as plain text or LaTeX and picks the
numbers, so texts run 40-150 words and two texts rarely share more than their topic.

Variants for planted duplicates: :func:`light_edit` (words swapped for synonyms, a typo, an
instruction added or dropped; the numbers kept) and :func:`number_change` (every number changed,
the words kept).

    from dedup_texts import problems, audit_sets
    texts = problems(3000, seed=1)
    ids_a, texts_a, ids_b, texts_b, planted = audit_sets(20000, 5000, share=0.02)
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field

MIN_WORDS, MAX_WORDS = 40, 150


@dataclass(frozen=True)
class Q:
    """A quantity: its symbol (LaTeX), range, unit and whether to draw it on a log scale."""

    symbol: str
    low: float
    high: float
    unit: str = ""
    log: bool = False


@dataclass(frozen=True)
class Family:
    topic: str
    objects: tuple[str, ...]
    quantities: dict[str, Q]
    facts: tuple[tuple[str, ...], ...]    # slots in order, each with alternative phrasings
    asks: tuple[tuple[str, ...], ...]     # things to ask, each with alternative phrasings
    extras: tuple[str, ...] = field(default=())  # optional facts or assumptions


def F(topic: str, objects: str, quantities: dict[str, Q], facts: list[str], asks: list[str],
      extras: tuple[str, ...] = ()) -> Family:
    """A family from compact text: alternatives within a slot are separated by ' | '."""
    return Family(topic, tuple(o.strip() for o in objects.split(";")), quantities,
                  tuple(tuple(s.strip() for s in slot.split(" | ")) for slot in facts),
                  tuple(tuple(s.strip() for s in ask.split(" | ")) for ask in asks), extras)


FAMILIES: tuple[Family, ...] = (
    F("Mechanics", "a wooden crate; a sled loaded with firewood; a steel toolbox; a box of books; "
      "a rubber-soled shoe; a granite block",
      {"m": Q("m", 0.5, 80, "kg"), "th": Q(r"\theta", 10, 50, "deg"), "mu": Q(r"\mu_k", 0.05, 0.6),
       "d": Q("d", 1, 30, "m")},
      ["{Obj} of mass {m} is released from rest on a ramp inclined at {th} to the horizontal. | "
       "A ramp makes an angle of {th} with the horizontal, and {obj} of mass {m} is let go at its "
       "top.",
       "The coefficient of kinetic friction between the surfaces is {mu}. | Kinetic friction acts, "
       "with coefficient {mu}.",
       "The slope of the ramp is {d} long. | The object slides a distance {d} along the incline."],
      ["What is the acceleration along the ramp? | Calculate the acceleration of {obj} down the "
       "slope.",
       "How long does it take to reach the bottom? | Find the time needed to cover the length of "
       "the ramp.",
       "Determine the speed at the bottom of the incline. | With what speed does it leave the "
       "ramp?",
       "How much mechanical energy is converted into heat by friction? | Find the work done by "
       "friction during the descent."],
      ("Take $g = 9.81\\,\\mathrm{m/s^2}$.", "Air resistance can be neglected.",
       "The ramp is fixed to the floor and does not move.")),
    F("Mechanics", "a soccer ball; a stone; a golf ball; an arrow; a jet of water from a fountain; "
      "a cannonball",
      {"v": Q("v_0", 5, 60, "m/s"), "th": Q(r"\alpha", 15, 75, "deg"), "h": Q("h", 0, 40, "m")},
      ["{Obj} is launched with an initial speed of {v} at an angle of {th} above the horizontal. "
       "| {name} sends {obj} into the air at {v}, directed {th} above the horizontal.",
       "The launch point is {h} above the level ground. | It starts from a platform {h} high."],
      ["How far from the launch point does it land? | Find the horizontal range.",
       "What maximum height above the ground does it reach? | Determine the highest point of the "
       "trajectory.",
       "For how long is it in flight? | Compute the time of flight.",
       "What is its speed just before it hits the ground? | Find the impact speed."],
      ("Neglect air resistance.", "Use $g = 9.8\\,\\mathrm{m/s^2}$.",
       "The ground around the launch site is flat.")),
    F("Mechanics", "a car; a motorcycle; a bobsled; a delivery van; a racing bicycle",
      {"m": Q("m", 100, 2500, "kg"), "r": Q("r", 20, 300, "m"), "v": Q("v", 5, 40, "m/s"),
       "th": Q(r"\theta", 5, 35, "deg")},
      ["{Obj} of mass {m} takes a curve of radius {r} at a constant speed of {v}. | A curve with "
       "a radius of {r} is driven by {obj} (mass {m}) at {v}.",
       "The road is banked at {th}. | The track surface is tilted by {th} towards the centre of "
       "the curve."],
      ["What minimum coefficient of static friction keeps it on its path? | Find the smallest "
       "friction coefficient that prevents skidding.",
       "At what speed would no friction be needed at all? | Determine the design speed of the "
       "banked curve.",
       "Calculate the normal force exerted by the road. | How large is the force of the road "
       "perpendicular to its surface?"],
      ("Treat the vehicle as a point mass.", "The tyres do not slip.")),
    F("Mechanics", "two carts on an air track; two railway wagons; two billiard balls; two ice "
      "hockey pucks; two toy trains",
      {"m1": Q("m_1", 0.2, 50, "kg"), "m2": Q("m_2", 0.2, 50, "kg"), "v1": Q("v_1", 0.5, 12, "m/s"),
       "v2": Q("v_2", 0, 5, "m/s")},
      ["The experiment involves {obj}. | Consider {obj} moving along one straight line.",
       "The first has mass {m1} and moves at {v1}; the second, of mass {m2}, moves in the same "
       "direction at {v2}. | A body of mass {m1} travelling at {v1} catches up with one of mass "
       "{m2} moving at {v2}.",
       "After the collision they stick together. | The collision is perfectly inelastic. | The "
       "collision is elastic."],
      ["Find the velocities after the collision. | What are the final velocities?",
       "How much kinetic energy is lost in the collision? | Calculate the kinetic energy "
       "dissipated.",
       "What impulse does the second body receive? | Determine the impulse delivered to the "
       "slower body."],
      ("Friction with the track is negligible.", "The collision lasts 0.02 s.")),
    F("Mechanics", "a block attached to a horizontal spring; a mass hanging from a spring; the "
      "suspension of a car; a bungee jumper on an elastic cord; a loudspeaker cone",
      {"m": Q("m", 0.1, 90, "kg"), "k": Q("k", 20, 90000, "N/m", True), "A": Q("A", 0.01, 0.5, "m")},
      ["Model {obj} as a simple harmonic oscillator with mass {m} and spring constant {k}. | "
       "{Obj} behaves like a mass of {m} on a spring of stiffness {k}.",
       "It is displaced {A} from equilibrium and released. | The oscillation amplitude is {A}."],
      ["What is the period of the oscillation? | Find the oscillation frequency.",
       "What is the maximum speed during the motion? | Determine the greatest speed reached.",
       "How much energy is stored in the oscillation? | Calculate the total mechanical energy.",
       "What is the maximum acceleration? | Find the largest acceleration of the mass."],
      ("Damping is negligible.", "The spring is massless and obeys Hooke's law.")),
    F("Mechanics", "a grandfather clock pendulum; a playground swing; a wrecking ball on a crane "
      "cable; a pendulum in a museum hall; a plumb bob on a thread",
      {"L": Q("L", 0.2, 25, "m"), "g": Q("g", 1.6, 9.8, "m/s^2"), "t": Q(r"\theta_0", 3, 12, "deg")},
      ["{Obj} has a length of {L}. | The length of {obj} is {L}.",
       "It swings with a small amplitude of {t} where the gravitational acceleration is {g}. | "
       "Local gravity is {g}, and the initial angle is {t}."],
      ["Find the period of small oscillations. | How long does one full swing take?",
       "How many oscillations does it complete in one hour? | Count the swings per hour.",
       "What length would give a period of exactly 2 s at the same place? | Find the length "
       "needed for a two-second period."],
      ("Treat it as a simple pendulum.", "The string or cable is inextensible.")),
    F("Mechanics", "an elevator; a crane; a water pump; a conveyor belt; a ski lift",
      {"m": Q("m", 50, 5000, "kg"), "h": Q("h", 2, 120, "m"), "t": Q("t", 5, 300, "s"),
       "eta": Q(r"\eta", 0.4, 0.95)},
      ["{Obj} raises a load of {m} through a height of {h}. | A mass of {m} is lifted {h} by "
       "{obj}.",
       "The lift takes {t}. | The whole operation lasts {t}.",
       "Its motor has an efficiency of {eta}. | Only a fraction {eta} of the electrical input "
       "ends up as work on the load."],
      ["What is the average useful power? | Calculate the mechanical power delivered.",
       "How much electrical energy does the motor consume? | Find the energy drawn from the "
       "supply.",
       "How much work is done against gravity? | Determine the increase in potential energy."],
      ("The load moves at constant speed.", "Take $g = 9.8\\,\\mathrm{m/s^2}$.")),
    F("Mechanics", "a uniform beam; a ladder leaning against a smooth wall; a seesaw; a diving "
      "board; a shop sign hung from a rod",
      {"m": Q("m", 5, 200, "kg"), "L": Q("L", 1, 12, "m"), "x": Q("x", 0.2, 5, "m"),
       "th": Q(r"\varphi", 30, 80, "deg")},
      ["{Obj} has mass {m} and length {L}. | Consider {obj} of length {L} and mass {m}.",
       "A person stands {x} from one end. | An extra load rests {x} from the lower end.",
       "It makes an angle of {th} with the ground. | The angle with the horizontal is {th}."],
      ["Find the forces at the supports. | What reaction forces act at each end?",
       "What torque does the weight produce about the lower end? | Compute the torque of "
       "gravity about the pivot.",
       "What minimum friction coefficient at the floor prevents slipping? | Find the least "
       "coefficient of static friction required for equilibrium."],
      ("The system is in static equilibrium.", "Take the weight to act at the centre of mass.")),
    F("Mechanics", "a solid cylinder; a hollow sphere; a flywheel; a bowling ball; a yo-yo; a "
      "potter's wheel",
      {"m": Q("m", 0.2, 300, "kg"), "R": Q("R", 0.03, 1.5, "m"), "w": Q(r"\omega", 2, 400, "rad/s"),
       "h": Q("h", 0.2, 10, "m")},
      ["{Obj} has mass {m} and radius {R}. | The radius of {obj} is {R} and its mass {m}.",
       "It rotates at {w}. | It rolls without slipping down a slope of height {h}."],
      ["What is its moment of inertia? | Calculate the rotational inertia about the axis.",
       "What is its rotational kinetic energy? | Find the kinetic energy of rotation.",
       "What is its linear speed at the bottom? | Find the translational speed after descending.",
       "What constant torque would stop it in 10 s? | Determine the braking torque needed."],
      ("Assume a uniform mass distribution.", "Rolling friction does no work.")),
    F("Mechanics", "a weather satellite; a space station; a moon of a distant planet; a GPS "
      "satellite; an asteroid",
      {"M": Q("M", 1e22, 2e27, "kg", True), "r": Q("r", 2e6, 4e8, "m", True),
       "m": Q("m", 100, 5e5, "kg", True)},
      ["{Obj} of mass {m} moves in a circular orbit of radius {r}. | A circular orbit of radius "
       "{r} is followed by {obj} whose mass is {m}.",
       "The central body has mass {M}. | It orbits a body of mass {M}."],
      ["Find its orbital speed. | What is the speed in orbit?",
       "What is the orbital period? | How long is one revolution?",
       "What is the escape speed from this orbit? | How fast must it go to escape?",
       "How much energy is needed to double the orbital radius? | Find the work to move it to "
       "an orbit twice as large."],
      ("Use $G = 6.67 \\times 10^{-11}\\,\\mathrm{N\\,m^2/kg^2}$.",
       "Ignore the gravity of all other bodies.")),
    F("Fluids", "a pine block; an iceberg; a hot-air balloon; a buoy; a small submarine; a "
      "hydrometer",
      {"V": Q("V", 0.001, 900, "m^3", True), "rho": Q(r"\rho", 90, 1100, "kg/m^3"),
       "rf": Q(r"\rho_f", 1.1, 1030, "kg/m^3")},
      ["{Obj} has a volume of {V} and an average density of {rho}. | The average density of "
       "{obj} is {rho}; its volume is {V}.",
       "It is placed in a fluid of density {rf}. | The surrounding fluid has density {rf}."],
      ["What fraction of its volume is submerged? | How much of it lies below the surface?",
       "What is the buoyant force on it? | Find the upthrust.",
       "What extra load would make it just sink? | Find the largest added mass before it "
       "submerges completely."],
      ("The fluid is at rest.", "Take $g = 9.81\\,\\mathrm{m/s^2}$.")),
    F("Fluids", "a water main; a garden hose; a Venturi meter; an irrigation pipe; a fire hose",
      {"d1": Q("d_1", 0.01, 0.8, "m"), "d2": Q("d_2", 0.005, 0.4, "m"), "v": Q("v_1", 0.5, 6, "m/s"),
       "p": Q("p_1", 1.2e5, 6e5, "Pa")},
      ["Water flows through {obj} whose diameter narrows from {d1} to {d2}. | In {obj} the "
       "diameter changes from {d1} to {d2}.",
       "In the wide part the speed is {v} and the pressure {p}. | Upstream, the water moves at "
       "{v} under a pressure of {p}."],
      ["Find the speed in the narrow section. | What is the flow speed where the pipe is "
       "narrow?",
       "What is the pressure in the narrow section? | Determine the pressure downstream.",
       "What is the volume flow rate? | How many litres pass per second?"],
      ("The flow is steady and the water incompressible.", "The pipe is horizontal.",
       "Viscosity can be ignored.")),
    F("Fluids", "a scuba diver; a dam wall; a mercury barometer; a hydraulic press; a water "
      "tower",
      {"h": Q("h", 0.5, 120, "m"), "A": Q("A", 0.002, 50, "m^2", True),
       "rho": Q(r"\rho", 800, 13600, "kg/m^3")},
      ["The situation concerns {obj} and a liquid of density {rho}. | {Obj} is in contact with "
       "a liquid of density {rho}.",
       "The depth involved is {h}. | The liquid column is {h} high.",
       "The relevant area is {A}. | A surface of {A} is exposed to the liquid."],
      ["What is the gauge pressure at that depth? | Find the pressure above atmospheric.",
       "What force does the liquid exert on the area? | Compute the hydrostatic force.",
       "What would the absolute pressure be? | Add atmospheric pressure and find the total."],
      ("Atmospheric pressure is 101 kPa.", "The liquid is incompressible.")),
    F("Mechanics", "a car braking; a train leaving a station; a sprinter; a falling apple; a "
      "cyclist; an aircraft on its take-off run",
      {"v0": Q("v_0", 0, 40, "m/s"), "a": Q("a", 0.3, 9.8, "m/s^2"), "t": Q("t", 1, 60, "s"),
       "d": Q("d", 5, 2000, "m", True)},
      ["Consider {obj}. | The motion of {obj} is studied.",
       "Its initial speed is {v0} and its acceleration has a magnitude of {a}. | It starts at "
       "{v0} and changes speed at a steady rate of {a}.",
       "The motion lasts {t}. | Observations cover a distance of {d}."],
      ["How far does it travel in that time? | Find the distance covered.",
       "What is its final speed? | Determine the speed at the end.",
       "How long does it take to cover the distance? | Find the elapsed time.",
       "What is the average velocity? | Compute the mean speed over the interval."],
      ("The acceleration is constant.", "Motion is along a straight line.")),
    F("Mechanics", "an Atwood machine; a block on a table pulled by a hanging mass; two "
      "buckets over a pulley; a lift counterweight system",
      {"m1": Q("m_1", 0.1, 40, "kg"), "m2": Q("m_2", 0.1, 40, "kg"), "mu": Q(r"\mu", 0, 0.5)},
      ["In {obj}, the masses are {m1} and {m2}. | {Obj} connects masses of {m1} and {m2} by a "
       "light rope.",
       "The friction coefficient where relevant is {mu}. | Friction, where present, has "
       "coefficient {mu}."],
      ["Find the acceleration of the masses. | What is the acceleration of the system?",
       "What is the tension in the rope? | Determine the rope tension.",
       "How fast are the masses moving after 2 s? | Find their speed two seconds after "
       "release."],
      ("The pulley is massless and frictionless.", "The rope does not stretch.")),
    F("Electricity & Magnetism", "two point charges; two small charged spheres; two dust "
      "particles; a proton and an electron; two charged pith balls",
      {"q1": Q("q_1", 1e-9, 5e-5, "C", True), "q2": Q("q_2", 1e-9, 5e-5, "C", True),
       "r": Q("r", 0.001, 2, "m", True)},
      ["The problem concerns {obj} in vacuum. | Consider {obj} held in empty space.",
       "Their charges are {q1} and {q2}. | One carries {q1}, the other {q2}.",
       "They are separated by {r}. | The distance between them is {r}."],
      ["What is the magnitude of the electrostatic force between them? | Find the Coulomb "
       "force.",
       "Where on the line joining them is the electric field zero? | Locate the point of zero "
       "field.",
       "What is the potential energy of the pair? | Compute the electric potential energy."],
      ("Use $k = 8.99 \\times 10^9\\,\\mathrm{N\\,m^2/C^2}$.", "The charges are point-like.")),
    F("Electricity & Magnetism", "an electron; a proton; an alpha particle; a singly charged "
      "ion; an oil droplet",
      {"V": Q("V", 10, 50000, "V", True), "d": Q("d", 0.002, 0.1, "m"), "L": Q("L", 0.01, 0.2, "m")},
      ["{Obj} starts from rest between two parallel plates. | Two parallel metal plates hold "
       "{obj}, initially at rest.",
       "A potential difference of {V} is applied across the plates, which are {d} apart. | The "
       "plates are separated by {d} and kept at {V} from each other.",
       "The plates are {L} long. | Each plate measures {L} along the direction of motion."],
      ["What is the electric field between the plates? | Find the field strength.",
       "What speed does it reach when it arrives at the other plate? | Find its final speed.",
       "How long does it take to cross the gap? | Determine the transit time.",
       "What force acts on it? | Calculate the electric force."],
      ("Gravity is negligible.", "The field between the plates is uniform.")),
    F("Electricity & Magnetism", "a parallel-plate capacitor; a camera flash capacitor; a "
      "capacitor in a defibrillator; a tuning capacitor",
      {"C": Q("C", 1e-12, 5e-3, "F", True), "V": Q("V", 1.5, 5000, "V", True),
       "k": Q(r"\kappa", 1, 8)},
      ["{Obj} has a capacitance of {C}. | The capacitance of {obj} is {C}.",
       "It is charged to {V}. | A voltage of {V} is applied to it.",
       "A dielectric with constant {k} is then inserted. | The gap is filled with a material of "
       "dielectric constant {k}."],
      ["How much charge is stored? | Find the charge on each plate.",
       "What energy is stored in it? | Calculate the stored electric energy.",
       "How does the energy change when the dielectric is inserted with the battery "
       "disconnected? | Find the new energy after the dielectric goes in."],
      ("Fringe effects are negligible.", "The battery is ideal.")),
    F("Electricity & Magnetism", "a flashlight circuit; a car headlight circuit; a circuit on a "
      "breadboard; a string of lamps; a heating element circuit",
      {"E": Q(r"\mathcal{E}", 1.5, 240, "V"), "r": Q("r", 0.05, 2, "Ω"), "R1": Q("R_1", 1, 500, "Ω"),
       "R2": Q("R_2", 1, 500, "Ω")},
      ["{Obj} is powered by a source of emf {E} with internal resistance {r}. | A battery of "
       "emf {E} and internal resistance {r} drives {obj}.",
       "Two resistors of {R1} and {R2} are connected in parallel across its terminals. | The "
       "load consists of {R1} and {R2} in series."],
      ["What current flows from the source? | Find the current delivered by the battery.",
       "What is the terminal voltage? | Determine the voltage across the terminals.",
       "What power is dissipated in each resistor? | Calculate the heat produced per second in "
       "each resistor.",
       "What fraction of the emf is lost inside the source? | Find the internal voltage drop."],
      ("Connecting wires have negligible resistance.", "The resistors are ohmic.")),
    F("Electricity & Magnetism", "an RC circuit; a camera flash unit; a pacemaker timing "
      "circuit; a windscreen wiper delay circuit",
      {"R": Q("R", 1e3, 5e6, "Ω", True), "C": Q("C", 1e-9, 1e-3, "F", True), "V": Q("V_0", 3, 400, "V")},
      ["In {obj} a capacitor of {C} discharges through a resistor of {R}. | {Obj} contains a "
       "capacitance of {C} and a resistance of {R}.",
       "The capacitor is initially charged to {V}. | At $t = 0$ the voltage across the "
       "capacitor is {V}."],
      ["What is the time constant? | Find the RC time constant.",
       "How long until the voltage falls to a tenth of its initial value? | When does the "
       "voltage reach 10% of the start?",
       "What is the initial current? | Find the current just after the switch closes.",
       "How much energy is dissipated in the resistor? | Find the total heat released."],
      ("The switch closes at $t = 0$.",)),
    F("Electricity & Magnetism", "a proton; an electron; a deuteron; a carbon ion; a muon",
      {"v": Q("v", 1e4, 3e7, "m/s", True), "B": Q("B", 0.001, 3, "T", True), "th": Q(r"\theta", 20, 90,
       "deg")},
      ["{Obj} enters a uniform magnetic field of {B} with speed {v}. | A field of {B} deflects "
       "{obj} moving at {v}.",
       "The velocity makes an angle of {th} with the field. | The angle between velocity and "
       "field is {th}."],
      ["What is the radius of its path? | Find the radius of curvature.",
       "What is the magnetic force on it? | Determine the Lorentz force.",
       "What is the period of its circular motion? | Find the cyclotron period.",
       "What is the pitch of the helix? | How far does it advance along the field per turn?"],
      ("The electric field is zero.", "Relativistic effects are negligible.")),
    F("Electricity & Magnetism", "a long straight wire; a solenoid; a power line; a circular "
      "coil; two parallel conductors",
      {"I": Q("I", 0.1, 800, "A", True), "r": Q("r", 0.001, 5, "m", True), "n": Q("n", 100, 20000,
       "turns/m")},
      ["{Obj} carries a current of {I}. | A current of {I} flows in {obj}.",
       "The field is required at a distance of {r}. | The point of interest is {r} away. | The "
       "winding density is {n}."],
      ["What is the magnetic field there? | Find the magnitude of the magnetic field.",
       "What force per metre acts on a parallel wire carrying the same current? | Determine the "
       "force per unit length between the conductors.",
       "How does the field compare with the Earth's field of about 50 microtesla? | Compare the "
       "result with the geomagnetic field."],
      ("Use $\\mu_0 = 4\\pi \\times 10^{-7}\\,\\mathrm{T\\,m/A}$.",)),
    F("Electricity & Magnetism", "a metal rod sliding on rails; a rectangular loop leaving a "
      "field; a bicycle dynamo coil; an aircraft wing; a rotating generator coil",
      {"B": Q("B", 0.00005, 2, "T", True), "L": Q("L", 0.05, 40, "m"), "v": Q("v", 0.2, 250, "m/s"),
       "R": Q("R", 0.1, 50, "Ω")},
      ["{Obj} moves through a magnetic field of {B}. | A field of {B} is crossed by {obj}.",
       "The conducting length is {L} and the speed is {v}. | It moves at {v}; the relevant "
       "length is {L}.",
       "The circuit has a resistance of {R}. | The closed circuit's resistance is {R}."],
      ["What emf is induced? | Find the motional emf.",
       "What current flows? | Determine the induced current.",
       "What force is needed to keep the speed constant? | Find the magnetic braking force.",
       "At what rate is heat produced? | Find the power dissipated."],
      ("The field is uniform and perpendicular to the motion.",)),
    F("Electricity & Magnetism", "a series RLC circuit; a radio tuner; a transformer; an "
      "induction cooktop circuit",
      {"L": Q("L", 1e-6, 2, "H", True), "C": Q("C", 1e-12, 1e-4, "F", True), "R": Q("R", 1, 2000, "Ω"),
       "V": Q("V", 1, 240, "V")},
      ["{Obj} contains an inductance of {L} and a capacitance of {C}. | The inductance in {obj} "
       "is {L}; the capacitance is {C}.",
       "The resistance is {R}, and the rms source voltage is {V}. | It is driven at {V} rms "
       "with {R} of resistance."],
      ["What is the resonance frequency? | Find the frequency at resonance.",
       "What current flows at resonance? | Find the rms current at resonance.",
       "What is the quality factor? | Determine the Q factor of the circuit."],
      ("The source frequency can be varied.",)),
    F("Thermodynamics", "a copper block; an aluminium pan; a steel bolt; a glass marble; a lead "
      "shot",
      {"m": Q("m", 0.01, 3, "kg"), "T": Q("T_1", 60, 400, "°C"), "mw": Q("m_w", 0.1, 5, "kg"),
       "Tw": Q("T_w", 5, 30, "°C")},
      ["{Obj} of mass {m} is heated to {T}. | A temperature of {T} is reached by {obj} with a "
       "mass of {m}.",
       "It is dropped into {mw} of water at {Tw}. | It is then put into an insulated container "
       "holding {mw} of water at {Tw}."],
      ["What is the final temperature? | Find the equilibrium temperature.",
       "How much heat does the water gain? | Compute the heat transferred to the water.",
       "How much water would boil away if the water started at 100 degrees? | Find the mass of "
       "steam produced instead."],
      ("The container absorbs no heat.", "Use tabulated specific heat capacities.")),
    F("Thermodynamics", "a car tyre; a weather balloon; a scuba tank; a bicycle pump; a sealed "
      "jar; a gas cylinder",
      {"p": Q("p", 5e4, 2e7, "Pa", True), "V": Q("V", 1e-4, 50, "m^3", True), "T": Q("T", 230, 600, "K")},
      ["{Obj} contains gas at pressure {p} and temperature {T}. | The gas in {obj} is at {T} "
       "under a pressure of {p}.",
       "Its volume is {V}. | The gas occupies {V}."],
      ["How many moles of gas are present? | Find the amount of substance.",
       "What is the pressure if the temperature rises by 40 K at constant volume? | Find the "
       "new pressure after heating by 40 K.",
       "What is the rms speed of the molecules if the gas is nitrogen? | Find the rms molecular "
       "speed for nitrogen.",
       "What is the mass of the gas if it is air? | Determine the mass of air inside."],
      ("Treat the gas as ideal.", "Use $R = 8.314\\,\\mathrm{J/(mol\\,K)}$.")),
    F("Thermodynamics", "a coal power plant; a car engine; a household refrigerator; a heat "
      "pump; a steam turbine",
      {"Th": Q("T_h", 350, 1200, "K"), "Tc": Q("T_c", 250, 320, "K"), "P": Q("P", 100, 1e9, "W", True)},
      ["{Obj} works between a hot reservoir at {Th} and a cold one at {Tc}. | The reservoirs of "
       "{obj} are at {Th} and {Tc}.",
       "Its power is {P}. | It delivers or moves energy at {P}."],
      ["What is the maximum possible efficiency? | Find the Carnot efficiency.",
       "How much heat is rejected per second? | Find the rate of heat output to the cold side.",
       "What is the best coefficient of performance? | Determine the ideal COP."],
      ("Assume the ideal (Carnot) limit.", "The reservoirs are large.")),
    F("Thermodynamics", "a steel rail; a concrete bridge deck; a brass ring; an aluminium "
      "window frame; a glass rod",
      {"L": Q("L_0", 0.02, 300, "m", True), "dT": Q(r"\Delta T", 10, 80, "K"),
       "a": Q(r"\alpha", 8e-6, 2.5e-5, "1/K")},
      ["{Obj} is {L} long at 20 degrees Celsius. | At room temperature {obj} measures {L}.",
       "Its temperature rises by {dT}. | It warms up by {dT}.",
       "The linear expansion coefficient is {a}. | Its material expands with $\\alpha$ = {a}."],
      ["By how much does it lengthen? | Find the change in length.",
       "What stress would appear if it were clamped? | Determine the thermal stress if "
       "expansion were prevented.",
       "What gap must be left for expansion? | How large an expansion joint is needed?"],
      ("The coefficient is constant over this range.",)),
    F("Thermodynamics", "a single-glazed window; a brick wall; a wooden door; a freezer wall; a "
      "copper rod",
      {"A": Q("A", 0.01, 30, "m^2"), "d": Q("d", 0.002, 0.4, "m"), "k": Q("k", 0.02, 400, "W/(m·K)", True),
       "dT": Q(r"\Delta T", 5, 60, "K")},
      ["{Obj} has an area of {A} and a thickness of {d}. | The thickness of {obj} is {d}, its "
       "area {A}.",
       "Its thermal conductivity is {k}. | The material conducts heat with $k$ = {k}.",
       "The temperature difference across it is {dT}. | One face is {dT} warmer than the other."],
      ["What is the rate of heat flow? | Find the heat current.",
       "How much energy is lost in a day? | Find the energy conducted in 24 hours.",
       "What thickness of insulation halves the loss? | How thick must it be for half the heat "
       "flow?"],
      ("Steady state has been reached.",)),
    F("Thermodynamics", "a star; a light bulb filament; a hot plate; a human body; a radiator "
      "panel",
      {"T": Q("T", 300, 30000, "K", True), "A": Q("A", 1e-5, 1e19, "m^2", True),
       "e": Q(r"\varepsilon", 0.3, 1)},
      ["{Obj} has a surface temperature of {T}. | The surface of {obj} is at {T}.",
       "Its radiating area is {A} and its emissivity {e}. | The emissivity is {e} over an area "
       "of {A}."],
      ["What power does it radiate? | Find the emitted power.",
       "At what wavelength is its emission strongest? | Find the peak wavelength.",
       "How would the power change if the temperature doubled? | Find the factor by which the "
       "power grows when $T$ doubles."],
      ("Use the Stefan-Boltzmann law.", "$\\sigma = 5.67 \\times 10^{-8}\\,\\mathrm{W/(m^2\\,K^4)}$.")),
    F("Waves & Acoustics", "a guitar string; a violin string; a piano wire; a cello string; a "
      "clothesline",
      {"L": Q("L", 0.3, 5, "m"), "T": Q("T", 20, 1500, "N"), "mu": Q(r"\mu", 1e-4, 0.05, "kg/m", True)},
      ["{Obj} is stretched over a length of {L}. | The vibrating length of {obj} is {L}.",
       "Its tension is {T}. | It is under a tension of {T}.",
       "It has a linear density of {mu}. | Its mass per unit length is {mu}."],
      ["What is the wave speed on it? | Find the speed of transverse waves.",
       "What is the fundamental frequency? | Find the frequency of the first harmonic.",
       "What tension raises the pitch by an octave? | Find the tension for twice the "
       "frequency."],
      ("Both ends are fixed.",)),
    F("Waves & Acoustics", "an ambulance siren; a train whistle; a bat; a police car; a "
      "racing car engine",
      {"f": Q("f", 200, 50000, "Hz", True), "v": Q("v_s", 5, 90, "m/s"), "c": Q("c", 330, 350, "m/s")},
      ["{Obj} emits sound at {f}. | The sound produced by {obj} has a frequency of {f}.",
       "The source moves at {v} towards a stationary listener. | It approaches an observer at "
       "{v}.",
       "The speed of sound in the air is {c}. | Sound travels at {c} that day."],
      ["What frequency does the listener hear? | Find the observed frequency.",
       "What frequency is heard after the source has passed? | Find the frequency as it "
       "recedes.",
       "What is the wavelength in front of the source? | Find the wavelength ahead of it."],
      ("The air is still.",)),
    F("Waves & Acoustics", "a rock concert; a jet engine; a lawn mower; a jackhammer; a "
      "firework",
      {"P": Q("P", 0.01, 1e5, "W", True), "r": Q("r", 1, 2000, "m", True), "b": Q(r"\beta", 60, 140, "dB")},
      ["{Obj} radiates sound with an acoustic power of {P}. | The acoustic power of {obj} is {P}.",
       "A listener stands {r} away. | The microphone is placed {r} from the source. | The level "
       "measured nearby is {b}."],
      ["What intensity reaches the listener? | Find the sound intensity there.",
       "What is the sound level in decibels? | Express the intensity level in dB.",
       "How far away does the level drop to 85 dB? | Find the distance for a safe level of "
       "85 dB."],
      ("Sound spreads uniformly in all directions.", "Absorption by the air is negligible.")),
    F("Waves & Acoustics", "an organ pipe; a flute; a drinking straw; a clarinet; a tube "
      "closed at one end",
      {"L": Q("L", 0.05, 5, "m"), "c": Q("c", 330, 350, "m/s")},
      ["{Obj} has a length of {L}. | The air column of {obj} is {L} long.",
       "The speed of sound is {c}. | Sound travels through the air inside at {c}."],
      ["What is its fundamental frequency if it is open at both ends? | Find the lowest "
       "resonance with both ends open.",
       "What is the fundamental if one end is closed? | Find the lowest resonance with one end "
       "closed.",
       "Which harmonics are present? | List the first three resonant frequencies."],
      ("End corrections can be ignored.",)),
    F("Optics", "a magnifying glass; a camera lens; a slide projector; a reading glass; the "
      "lens of a microscope",
      {"f": Q("f", 0.01, 2, "m"), "d": Q("d_o", 0.02, 20, "m", True), "h": Q("h_o", 0.001, 2, "m", True)},
      ["{Obj} has a focal length of {f}. | The focal length of {obj} is {f}.",
       "An object stands {d} in front of it. | The object distance is {d}.",
       "The object is {h} tall. | The height of the object is {h}."],
      ["Where is the image formed? | Find the image distance.",
       "What is the magnification? | Find the lateral magnification.",
       "Is the image real or virtual, and how tall is it? | Describe the image and give its "
       "height."],
      ("Use the thin-lens equation.",)),
    F("Optics", "a concave shaving mirror; a convex security mirror; a car's side mirror; a "
      "dentist's mirror; a telescope mirror",
      {"R": Q("R", 0.05, 20, "m"), "d": Q("d_o", 0.02, 40, "m", True)},
      ["{Obj} has a radius of curvature of {R}. | The radius of curvature of {obj} is {R}.",
       "An object is placed {d} from it. | A face is held {d} in front of it."],
      ["Where is the image? | Find the image position.",
       "What is the magnification? | Find how enlarged or reduced the image is.",
       "Is the image upright? | State whether the image is erect or inverted, and why."],
      ("Rays are paraxial.",)),
    F("Optics", "a swimming pool; an optical fibre; a glass prism; a diamond; a water-filled "
      "aquarium",
      {"n": Q("n", 1.31, 2.42), "th": Q(r"\theta_1", 5, 80, "deg"), "d": Q("d", 0.01, 4, "m")},
      ["Light enters {obj} from air at an angle of incidence of {th}. | A ray strikes {obj} at "
       "{th} to the normal.",
       "The refractive index of the medium is {n}. | The medium has $n$ = {n}.",
       "The depth or thickness involved is {d}. | The light travels through {d} of material."],
      ["What is the angle of refraction? | Find the refracted angle.",
       "What is the critical angle for total internal reflection? | Find the critical angle.",
       "What is the apparent depth seen from above? | How deep does it look?",
       "How long does the light take to cross it? | Find the travel time through the medium."],
      ("The surrounding air has $n = 1.00$.",)),
    F("Optics", "a double-slit experiment; a diffraction grating; a single narrow slit; a CD "
      "used as a grating",
      {"lam": Q(r"\lambda", 4e-7, 7e-7, "m"), "d": Q("d", 1e-6, 5e-4, "m", True), "L": Q("L", 0.5, 5, "m")},
      ["{Obj} is lit by light of wavelength {lam}. | Light with $\\lambda$ = {lam} falls on {obj}.",
       "The spacing or width is {d}. | The relevant separation is {d}.",
       "The screen is {L} away. | The pattern is viewed on a screen {L} away."],
      ["What is the spacing of the bright fringes? | Find the fringe separation.",
       "At what angle is the first-order maximum? | Find the angle of the first order.",
       "How many orders can be seen? | What is the highest visible order?"],
      ("The small-angle approximation may be used where appropriate.",)),
    F("Optics", "a soap bubble; an oil slick on water; an anti-reflective coating; a thin air "
      "wedge; a coated camera lens",
      {"t": Q("t", 5e-8, 2e-6, "m", True), "n": Q("n", 1.2, 1.6), "lam": Q(r"\lambda", 4e-7, 7e-7, "m")},
      ["{Obj} forms a thin film of thickness {t}. | The film in {obj} is {t} thick.",
       "Its refractive index is {n}. | The film has index {n}.",
       "It is illuminated with light of wavelength {lam}. | Light of $\\lambda$ = {lam} falls on "
       "it at normal incidence."],
      ["Which visible wavelengths are strongly reflected? | Find the reflected colours.",
       "What is the minimum thickness for destructive interference? | Find the thinnest film "
       "giving no reflection.",
       "Is the reflection bright or dark at this wavelength? | Decide whether reflection is "
       "enhanced or suppressed."],
      ("Consider phase changes on reflection.",)),
    F("Modern Physics", "a sodium surface; a potassium photocathode; a zinc plate; a caesium "
      "cathode in a photocell",
      {"W": Q(r"\phi", 1.9, 4.3, "eV"), "lam": Q(r"\lambda", 1e-7, 6e-7, "m")},
      ["Light of wavelength {lam} falls on {obj}. | {Obj} is illuminated with radiation of "
       "wavelength {lam}.",
       "The work function is {W}. | Electrons are bound with a work function of {W}."],
      ["What is the maximum kinetic energy of the photoelectrons? | Find the largest electron "
       "energy.",
       "What stopping potential is needed? | Find the stopping voltage.",
       "What is the threshold wavelength? | Find the cut-off wavelength."],
      ("Use $h = 6.63 \\times 10^{-34}\\,\\mathrm{J\\,s}$.",)),
    F("Modern Physics", "a carbon-14 sample; a technetium-99m dose; an iodine-131 source; a "
      "radon sample in a basement; a cobalt-60 source",
      {"T": Q("T_{1/2}", 6, 2e11, "s", True), "N": Q("N_0", 1e6, 1e22, "", True), "t": Q("t", 10, 1e12,
       "s", True)},
      ["{Obj} has a half-life of {T}. | The half-life for {obj} is {T}.",
       "Initially it contains {N} nuclei. | It starts with {N} radioactive nuclei.",
       "The elapsed time is {t}. | A time of {t} passes."],
      ["How many nuclei remain? | Find the number of undecayed nuclei.",
       "What is the activity at the start? | Find the initial activity.",
       "How long until only 1% remains? | Find the time for 99% to decay."],
      ("Decay follows the exponential law.",)),
    F("Modern Physics", "an electron; a neutron; a proton; a helium atom; a dust grain",
      {"v": Q("v", 100, 2e7, "m/s", True), "V": Q("V", 10, 1e5, "V", True)},
      ["{Obj} moves at {v}. | The speed of {obj} is {v}. | {Obj} is accelerated through {V}."],
      ["What is its de Broglie wavelength? | Find the matter wavelength.",
       "What is its momentum? | Find the momentum.",
       "Would it diffract noticeably from a crystal with 0.3 nm spacing? | Compare the "
       "wavelength with an atomic spacing of 0.3 nm."],
      ("Non-relativistic formulas suffice.", "Use $h = 6.63 \\times 10^{-34}\\,\\mathrm{J\\,s}$.")),
    F("Modern Physics", "a muon; a spaceship; a cosmic-ray proton; a pion; an unstable particle "
      "in an accelerator",
      {"b": Q(r"\beta", 0.3, 0.999), "t": Q(r"\tau_0", 1e-8, 1e6, "s", True)},
      ["{Obj} moves at {b} times the speed of light. | "
       "The speed of {obj}, as a fraction of the speed of light, is {b}.",
       "Its proper lifetime or clock interval is {t}. | In its rest frame the interval is {t}."],
      ["What interval is measured in the laboratory frame? | Find the dilated time.",
       "How far does it travel in the lab frame? | Find the distance covered before it decays.",
       "What is the Lorentz factor? | Find $\\gamma$."],
      ("Use $c = 3.00 \\times 10^8\\,\\mathrm{m/s}$.",)),
    F("Modern Physics", "a hydrogen atom; a hydrogen discharge tube; a hydrogen-like helium ion; "
      "a gas of excited hydrogen",
      {"n1": Q("n_1", 1, 3), "n2": Q("n_2", 4, 7)},
      ["In {obj}, an electron falls from level {n2} to level {n1}. | {Obj} emits light when an "
       "electron drops from level {n2} down to level {n1}."],
      ["What is the wavelength of the emitted photon? | Find the emitted wavelength.",
       "What is the photon energy in electronvolts? | Find the energy released.",
       "Is the line visible? | State which spectral series the line belongs to."],
      ("Use the Bohr model.", "The ground-state energy is -13.6 eV.")),
    F("Modern Physics", "a uranium-235 fission event; a deuterium-tritium fusion reaction; a "
      "nuclear power station; the Sun's core; an alpha decay",
      {"dm": Q(r"\Delta m", 1e-30, 5e-28, "kg", True), "P": Q("P", 1e6, 4e26, "W", True)},
      ["In {obj}, the mass defect per reaction is {dm}. | Each reaction in {obj} converts {dm} "
       "of mass into energy.",
       "The total output is {P}. | Energy is released at a rate of {P}."],
      ["How much energy is released per reaction? | Find the energy per event.",
       "How many reactions occur each second? | Find the reaction rate.",
       "How much mass is converted per year? | Find the mass lost each year."],
      ("Use $E = mc^2$.",)),
)

NAMES = ("Alice", "Bilal", "Chen", "Dana", "Emeka", "Farah", "Gustav", "Hana", "Ivan", "Jia",
         "Kofi", "Lena", "Mateo", "Nadia", "Oskar", "Priya", "Quentin", "Rosa", "Sven", "Tariq",
         "Uma", "Viktor", "Wen", "Ximena", "Yusuf", "Zara")

SCENES = (
    "{name} is preparing a demonstration for an open day at the school.",
    "During a laboratory session, a group of students records the following data.",
    "The following situation comes from an engineering design review.",
    "{name} found this problem in an old olympiad booklet.",
    "A museum exhibit on everyday physics shows this example.",
    "An exam for first-year students includes this exercise.",
    "{name} wants to check a claim made in a popular science video.",
    "A technician at a research institute needs a quick estimate.",
    "This question appeared in a homework set on the topic.",
    "{name} is writing a report for an internship at a manufacturing company.",
    "While on holiday, {name} notices something that can be analysed with basic physics.",
    "A safety inspector asks for a calculation before approving the setup.",
    "In a science club meeting, the members discuss the following case.",
    "A textbook chapter ends with this worked problem for self-study.",
    "{name} and a friend argue about the answer to the following question.",
    "For a documentary, the producers want the numbers checked by a physicist.",
    "Consider the following idealised situation.",
    "A teacher sets this problem as a warm-up before the test.",
    "An online course uses this example in its quiz.",
    "The following data come from a student project.",
)

ROLES = ("a marine biologist", "a civil engineer", "a high-school teacher", "a museum curator",
         "a mountain guide", "an apprentice electrician", "a sound technician", "a farmer",
         "a paramedic", "a pastry chef", "a drone pilot", "a geologist", "an architecture student",
         "a race mechanic", "a lighthouse keeper", "a glassblower", "a data journalist",
         "a retired sailor", "a veterinary nurse", "a stage designer", "a forestry ranger",
         "a bicycle courier", "a jewellery maker", "an astronomy enthusiast", "a brewer",
         "a robotics hobbyist", "a physiotherapist", "a bridge inspector", "a beekeeper",
         "a violin maker")
PLACES = ("in a small coastal town", "at a busy airport", "in a university workshop",
          "on a research vessel in the Arctic", "at a ski resort", "in a vineyard",
          "at a car factory", "in a hospital basement", "on a construction site downtown",
          "at a summer camp", "in a village bakery", "at an observatory in the desert",
          "in a recording studio", "on an offshore wind farm", "at a county fair",
          "in a chemistry teaching lab", "at a fire station", "in an old watermill",
          "at a football stadium", "in a greenhouse", "at a railway museum", "on a cargo ship",
          "in a theatre", "at a climbing gym", "in a rural clinic")
PURPOSES = ("wants to double-check a number before a meeting",
            "is curious about the physics behind a daily task",
            "needs the result for a safety report", "is writing a short article for a newsletter",
            "is designing a hands-on activity for children", "must justify a purchase to a manager",
            "is settling a bet with a colleague", "prepares notes for an evening class",
            "plans an upgrade of some old equipment", "is troubleshooting an unexpected result",
            "is making a video for a science channel", "wants to estimate running costs",
            "needs an order-of-magnitude check", "is reviewing a supplier's specification",
            "is revising for a professional certificate")
OUTSIDE = ("The calculation below is part of that work.", "The details are as follows.",
           "Only basic physics is needed.", "The relevant facts are listed here.",
           "Here is the situation.", "It turns out to be a standard physics problem.")

CLOSINGS = (
    "Give your answer to three significant figures.",
    "Show all steps of your reasoning.",
    "Express the result in SI units.",
    "State any assumptions you make.",
    "Comment on whether the result is physically reasonable.",
    "Round the final answer to two significant figures.",
    "Include units in your final answer.",
    "Explain briefly which principle you use.",
    "Draw a sketch of the situation before calculating.",
    "Estimate the uncertainty if each given value is known to within 5%.",
)

FILLERS = ("Work symbolically first, then substitute the numbers.",
           "Check that the units of the result are consistent.",
           "Keep the intermediate results to four significant figures.")

_LATEX_UNITS = {"deg": "^\\circ", "°C": "^\\circ\\mathrm{C}", "Ω": "\\Omega"}


def _significant(value: float, digits: int) -> str:
    if value == 0:
        return "0"
    ndigits = digits - 1 - math.floor(math.log10(abs(value)))
    return f"{round(value, ndigits):.{max(0, ndigits)}f}"


def quantity(q: Q, rng: random.Random, latex: bool, named: bool) -> str:
    """A value of ``q`` written as plain text (``12.5 kg``) or LaTeX (``$m = 12.5\\,\\mathrm{kg}$``)."""
    if q.log:
        value = math.exp(rng.uniform(math.log(q.low), math.log(q.high)))
    else:
        value = rng.uniform(q.low, q.high)
    if q.low == int(q.low) and q.high == int(q.high) and q.high - q.low < 10 and not q.unit:
        value = rng.randint(int(q.low), int(q.high))  # quantum numbers and the like
    digits = rng.choice((2, 3, 3))
    exponent = math.floor(math.log10(abs(value))) if value else 0
    if exponent <= -3 or exponent >= 5:
        mantissa = _significant(value / 10 ** exponent, digits)
        number = (f"{mantissa} \\times 10^{{{exponent}}}" if latex
                  else f"{mantissa} x 10^{exponent}")
    else:
        number = str(value) if isinstance(value, int) else _significant(value, digits)
    if latex:
        unit = _LATEX_UNITS.get(q.unit)
        if unit is None:
            upright = q.unit.replace("·", "\\cdot ")
            unit = f"\\,\\mathrm{{{upright}}}" if q.unit else ""
        return f"${q.symbol} = {number}{unit}$" if named else f"${number}{unit}$"
    unit = {"deg": "°", "": ""}.get(q.unit, " " + q.unit) if q.unit != "deg" else \
        rng.choice(("°", " degrees"))
    return f"{number}{unit}"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def problem(rng: random.Random, meta: dict | None = None,
            families: tuple[Family, ...] = FAMILIES) -> str:
    """One problem statement of 40-150 words from one of ``families`` (``meta``, if given, gets
    what was chosen)."""
    family = rng.choice(families)
    latex = rng.random() < 0.5
    named = rng.random() < 0.6
    obj = rng.choice(family.objects)
    values = {name: quantity(q, rng, latex, named) for name, q in family.quantities.items()}
    values.update(obj=obj, Obj=_capital(obj), name=rng.choice(NAMES))
    facts = [rng.choice(slot) for slot in family.facts]
    if len(facts) > 2 and rng.random() < 0.5:
        rest = facts[1:]
        rng.shuffle(rest)
        facts = facts[:1] + rest
    extras = [e for e in family.extras if rng.random() < 0.5]
    asks = rng.sample(family.asks, k=min(len(family.asks), rng.choice((1, 2, 2, 3))))
    phrased = [rng.choice(ask) for ask in asks]
    if len(phrased) > 1:
        question = " ".join(f"({'abc'[i]}) {ask}" for i, ask in enumerate(phrased))
    else:
        question = phrased[0]
    if meta is not None:
        meta.update(family=FAMILIES.index(family), obj=obj, asks=frozenset(map(family.asks.index, asks)))
    if rng.random() < 0.7:
        scene = (f"{rng.choice(NAMES)}, {rng.choice(ROLES)} {rng.choice(PLACES)}, "
                 f"{rng.choice(PURPOSES)}. {rng.choice(OUTSIDE)}")
    else:
        scene = rng.choice(SCENES) if rng.random() < 0.5 else None
    closing = rng.choice(CLOSINGS) if rng.random() < 0.5 else None

    def build() -> str:
        head = " ".join(([scene] if scene else []) + facts).format(**values)
        return " ".join([head, *extras, question.format(**values), *([closing] if closing else [])])

    text = build()
    while len(text.split()) < MIN_WORDS:
        if scene is None:
            scene = rng.choice(SCENES)
        elif closing is None:
            closing = rng.choice(CLOSINGS)
        else:
            missing = [e for e in family.extras + FILLERS if e not in extras]
            if not missing:
                break
            extras.append(missing[0])
        text = build()
    while len(text.split()) > MAX_WORDS and (closing or scene or extras):
        if closing:
            closing = None
        elif extras:
            extras.pop()
        else:
            scene = None
        text = build()
    return text


def problems(n: int, seed: int = 1, families: tuple[Family, ...] = FAMILIES,
             exclude: set[str] | None = None) -> list[str]:
    """``n`` distinct problem statements (none of them in ``exclude``)."""
    rng = random.Random(seed)
    seen: set[str] = set(exclude or ())
    out: list[str] = []
    while len(out) < n:
        text = problem(rng, None, families)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


# -- variants -------------------------------------------------------------------------------

SYNONYMS = (("Find", "Determine"), ("Calculate", "Compute"), ("What is", "Work out"),
            ("released", "let go"), ("placed", "put"), ("distance", "separation"),
            ("Consider", "Take"), ("initially", "at first"), ("magnitude", "size"),
            ("moves", "travels"), ("required", "needed"), ("large", "big"))
_NUMBER = re.compile(r"(?<![-^{\w.])\d+(?:\.\d+)?(?![\w}^])")


def light_edit(text: str, rng: random.Random) -> str:
    """The same problem with a few words changed: synonyms, a typo, an instruction; same numbers."""
    edited = text
    pairs = list(SYNONYMS)
    rng.shuffle(pairs)
    swaps = 0
    for old, new in pairs:
        for a, b in ((old, new), (new, old)):
            if a in edited and swaps < 3:
                edited = edited.replace(a, b, 1)
                swaps += 1
    words = edited.split(" ")
    long_words = [i for i, w in enumerate(words) if w.isalpha() and len(w) > 5]
    if long_words:
        i = rng.choice(long_words)
        w = words[i]
        j = rng.randrange(1, len(w) - 2)
        words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]  # a transposed pair of letters
        edited = " ".join(words)
    if rng.random() < 0.5:
        edited += " " + rng.choice(CLOSINGS)
    if edited == text:
        edited = text.rstrip(".?") + "."
    return edited


def number_change(text: str, rng: random.Random) -> str:
    """The same problem with every number outside exponents changed (the words kept)."""
    def new(match: re.Match[str]) -> str:
        old = match.group(0)
        decimals = len(old.split(".")[1]) if "." in old else 0
        value = float(old) * rng.choice((rng.uniform(0.5, 0.85), rng.uniform(1.15, 1.8)))
        changed = f"{value:.{decimals}f}"
        if changed == old or float(changed) == 0:
            changed = f"{float(old) + 1:.{decimals}f}"
        return changed

    return _NUMBER.sub(new, text)


def audit_sets(n_a: int, n_b: int, share: float = 0.02, shared_families: int = 2, seed: int = 11
               ) -> tuple[list[str], list[str], list[str], list[str], list[tuple[str, str, str]]]:
    """``n_a`` texts to audit and ``n_b`` to audit them against, all distinct, except that a
    ``share`` of the first set are light edits or number changes of texts of the second.

    The two sets are drawn from different halves of the families but for ``shared_families``
    families in both: texts of one family score a cosine of 0.8 or more about 8% of the time
    (the same topic and phrasing), so sets drawn from all families alike would pair hundreds of
    thousands of texts by accident, far more than a real audit finds. A few shared families
    give a realistic few thousand same-topic pairs besides the planted ones.

    Returns ids and texts of both sets and the planted pairs ``(id_a, id_b, kind)``."""
    rng = random.Random(seed)
    order = list(range(len(FAMILIES)))
    rng.shuffle(order)
    half = len(order) // 2
    families_b = tuple(FAMILIES[i] for i in order[:half])
    families_a = tuple(FAMILIES[i] for i in order[half:] + order[:shared_families])
    texts_b = problems(n_b, seed, families_b)
    texts_a = problems(n_a, seed + 1, families_a, exclude=set(texts_b))
    ids_a = [f"q{i:06d}" for i in range(n_a)]
    ids_b = [f"b{i:06d}" for i in range(n_b)]
    planted = []
    count = int(round(share * n_a))
    seen = set(texts_a) | set(texts_b)
    for k, (slot, j) in enumerate(zip(rng.sample(range(n_a), count), rng.sample(range(n_b), count))):
        kind = "light_edit" if k % 2 == 0 else "numbers"
        variant = texts_b[j]
        while variant in seen:
            variant = (light_edit if kind == "light_edit" else number_change)(texts_b[j], rng)
        seen.add(variant)
        texts_a[slot] = variant
        planted.append((ids_a[slot], ids_b[j], kind))
    return ids_a, texts_a, ids_b, texts_b, planted
