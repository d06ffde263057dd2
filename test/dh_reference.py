"""Independent reference for the two serial arms of seed 002 (S. K. Saha, "Recursive dynamics
algorithms for serial, parallel, and closed-chain multibody systems", DeNOC paper), Section 2.5:
the PUMA (Table 3) and the Stanford arm (Table 4), with the joint trajectories of eqs. (22)-(23).

This module does NOT use charmie_dynamics. It only hard-codes the paper's tables as plain data and
builds (a) the forward kinematics by the plain DH matrix product and (b) a ``pinocchio.Model``
directly from the DH table, so that the package's YAML models (config/examples/puma.yaml,
config/examples/stanford_arm.yaml) can be checked against something written independently.

DH convention (seed 002 Section 2.4.1 items 1-5 and Saha 1999a)
----------------------------------------------------------------
Saha numbers frames so that frame i sits on joint axis i and is attached to link i-1 (frame 1 is
the base frame); the four parameters of row i act as the *standard* (distal) DH product

    T_i = Rz(theta_i) Tz(b_i) Tx(a_i) Rx(alpha_i)      (Saha frame i -> Saha frame i+1)

i.e. Saha's frame i+1 is the standard-DH frame i (Craig/Paul "standard" numbering, frame 0 =
base).  In this module "DH frame k" always means the standard frame k (k = 0..6): DH frame k is
fixed to link k, has its z axis on joint axis k+1 and its origin where the common normal of
joint axes k and k+1 meets axis k+1.  ``dh_forward`` returns DH frames 1..n.

Inertia data (items 3-5 of Section 2.4.1): m_i; ``[r_i]_{i+1}``, "the vector denoting the distance
of the (i+1)st joint from the i-th mass center C_i, in the (i+1)st frame", i.e. the vector from C_i
to the origin O_{i+1} of Saha frame i+1 (= DH frame i), so the centre of mass of link i in DH
frame i is  c_i = -r_i  (see R_IS_FROM_COM_TO_NEXT_JOINT); ``[I_i]_{i+1}`` the inertia about C_i
in DH frame i.  Tables 3(b)/4(b) give the columns r_{i,x}, r_{i,y}, r_{i,z}.

Gravity: eq. (17) adds -g to the base acceleration; the paper gives no number or direction, the
base z axis (joint-1 axis) being vertical for both arms.  We use g = 9.81 m/s^2 along -z of the
base frame (DH frame 0 = world).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PI = np.pi
G = 9.81
GRAVITY = np.array([0.0, 0.0, -G])

#: Reading of the tables' r_i columns.  True: r_i points from C_i to the next joint (the paper's
#: text, Section 2.4.1 item 4), com = -r_i.  False would mean the tables list the com itself.
R_IS_FROM_COM_TO_NEXT_JOINT = True


@dataclass(frozen=True)
class DHRow:
    """One row of a DH table (standard DH product Rz(theta) Tz(b) Tx(a) Rx(alpha)).

    joint: "R" (theta is the variable, ``theta`` is its constant offset) or "P" (b is the
    variable, ``b`` is its constant offset).  Tables 3(a)/4(a) have zero offsets.
    """
    joint: str
    a: float
    b: float
    alpha: float
    theta: float


@dataclass(frozen=True)
class Arm:
    name: str
    dh: tuple            # tuple of DHRow
    masses: tuple        # kg
    r: tuple             # r_i as printed in the table, [r_i]_{i+1} in DH frame i (m)
    inertias: tuple      # 3x3 (kg m^2) about C_i in DH frame i, as printed
    coordinate_names: tuple

    @property
    def coms(self) -> list:
        """Centre of mass of link i in DH frame i."""
        s = -1.0 if R_IS_FROM_COM_TO_NEXT_JOINT else 1.0
        return [s * np.asarray(r, float) for r in self.r]


def _inertia(ixx, ixy, ixz, iyy, iyz, izz) -> np.ndarray:
    """Column order of Tables 3(b)/4(b): I_xx, I_xy, I_xz, I_yy, I_yz, I_zz."""
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], float)


# ---------------------------------------------------------------- Table 3: PUMA (all revolute)
PUMA = Arm(
    name="puma",
    dh=(
        #     joint  a (m)  b (m)  alpha (rad) theta
        DHRow("R", 0.0, 0.0, -PI / 2, 0.0),
        DHRow("R", 0.432, 0.149, 0.0, 0.0),
        DHRow("R", 0.02, 0.0, -PI / 2, 0.0),
        DHRow("R", 0.0, 0.432, -PI / 2, 0.0),
        DHRow("R", 0.0, 0.0, -PI / 2, 0.0),
        DHRow("R", 0.0, 0.05, 0.0, 0.0),
    ),
    masses=(10.521, 15.761, 8.767, 1.052, 1.052, 0.351),
    r=(
        (0.0, 0.0, 0.054),
        (0.292, 0.0, 0.0),
        (0.02, 0.0, -0.197),
        (0.0, -0.057, 0.0),
        (0.0, 0.0, -0.007),
        (0.0, 0.0, 0.019),
    ),
    inertias=(
        _inertia(1.612, 0, 0, 1.612, 0, 0.5091),
        _inertia(0.4898, 0, 0, 8.0783, 0, 8.2672),
        _inertia(3.3768, 0, 0, 3.3768, 0, 0.3009),
        _inertia(0.181, 0, 0, 0.1273, 0, 0.181),
        _inertia(0.0735, 0, 0, 0.1273, 0, 0.0735),
        _inertia(0.0071, 0, 0, 0.0071, 0, 0.0141),
    ),
    coordinate_names=("theta1", "theta2", "theta3", "theta4", "theta5", "theta6"),
)

# ------------------------------------------------- Table 4: Stanford arm (joint 3 prismatic, b3)
STANFORD = Arm(
    name="stanford_arm",
    dh=(
        DHRow("R", 0.0, 0.1, -PI / 2, 0.0),
        DHRow("R", 0.0, 0.1, -PI / 2, 0.0),
        DHRow("P", 0.0, 0.0, 0.0, 0.0),
        DHRow("R", 0.0, 0.6, PI / 2, 0.0),
        DHRow("R", 0.0, 0.0, -PI / 2, 0.0),
        DHRow("R", 0.0, 0.0, 0.0, 0.0),
    ),
    masses=(9.0, 6.0, 4.0, 1.0, 0.6, 0.5),
    r=(
        (0.0, -0.1, 0.0),
        (0.0, 0.0, 0.0),
        (0.0, 0.0, 0.0),
        (0.0, -0.1, 0.0),
        (0.0, 0.0, -0.06),
        (0.0, 0.0, 0.2),
    ),
    inertias=(
        _inertia(0.01, 0, 0, 0.02, 0, 0.01),
        _inertia(0.05, 0, 0, 0.06, 0, 0.01),
        _inertia(0.4, 0, 0, 0.4, 0, 0.01),
        _inertia(0.001, 0, 0, 0.001, 0, 0.0005),
        _inertia(0.0005, 0, 0, 0.0005, 0, 0.0002),
        _inertia(0.003, 0, 0, 0.001, 0, 0.002),
    ),
    coordinate_names=("theta1", "theta2", "b3", "theta4", "theta5", "theta6"),
)

ARMS = {"puma": PUMA, "stanford_arm": STANFORD}


# ------------------------------------------------------------------------------ kinematics
def rot_x(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def homogeneous(rotation: np.ndarray | None = None, translation=(0.0, 0.0, 0.0)) -> np.ndarray:
    t = np.eye(4)
    if rotation is not None:
        t[:3, :3] = rotation
    t[:3, 3] = translation
    return t


def _joint_values(row: DHRow, qi: float) -> tuple[float, float]:
    """(theta, b) of a row for joint value qi."""
    if row.joint == "R":
        return row.theta + qi, row.b
    if row.joint == "P":
        return row.theta, row.b + qi
    raise ValueError(f"joint type {row.joint!r}, expected R or P")


def dh_link_transform(row: DHRow, qi: float) -> np.ndarray:
    """Standard DH link transform Rz(theta) Tz(b) Tx(a) Rx(alpha) (DH frame i-1 -> DH frame i)."""
    theta, b = _joint_values(row, qi)
    return (homogeneous(rot_z(theta)) @ homogeneous(None, (0.0, 0.0, b))
            @ homogeneous(None, (row.a, 0.0, 0.0)) @ homogeneous(rot_x(row.alpha)))


def dh_forward(table, q) -> list[np.ndarray]:
    """World (DH frame 0) to DH frames 1..n: element k is the 4x4 transform of DH frame k+1."""
    q = np.asarray(q, float)
    if len(q) != len(table):
        raise ValueError(f"{len(q)} joint values for {len(table)} DH rows")
    t = np.eye(4)
    out = []
    for row, qi in zip(table, q):
        t = t @ dh_link_transform(row, qi)
        out.append(t)
    return out


def joint_frames(table, q) -> list[np.ndarray]:
    """World to the moving joint frame of joint i (i = 1..n): DH frame i-1 moved by joint i, i.e.
    DH frame i-1 * Rz(theta_i) (revolute) or * Rz(theta_i) Tz(b_i) (prismatic).  This is the body
    frame of link i chosen in the YAML models (and the pinocchio joint frame below)."""
    q = np.asarray(q, float)
    t = np.eye(4)
    out = []
    for row, qi in zip(table, q):
        theta, b = _joint_values(row, qi)
        moved = homogeneous(rot_z(theta))
        if row.joint == "P":
            moved = moved @ homogeneous(None, (0.0, 0.0, b))
        out.append(t @ moved)
        t = t @ dh_link_transform(row, qi)
    return out


def joint_to_dh_frame(row: DHRow) -> np.ndarray:
    """Constant transform from the moving joint frame of joint i to DH frame i:
    Tz(b_i) Tx(a_i) Rx(alpha_i) (revolute) or Tx(a_i) Rx(alpha_i) (prismatic: b_i is the joint)."""
    b = row.b if row.joint == "R" else 0.0
    return homogeneous(rot_x(row.alpha), (row.a, 0.0, b))


# ------------------------------------------------------------------------------- pinocchio
def pinocchio_model(table, masses, coms, inertias, gravity=GRAVITY):
    """A ``pinocchio.Model`` built straight from the DH table.

    Joint i is a JointModelRZ / JointModelPZ placed in the frame of joint i-1 at
    Tz(b_{i-1}) Tx(a_{i-1}) Rx(alpha_{i-1}) (the end of the previous DH row; identity for i = 1),
    followed by Rz(theta_i) for a prismatic joint's constant theta.  The link's inertia (mass m_i,
    com c_i and inertia I_i about C_i, both in DH frame i) is appended with the body placement
    joint frame -> DH frame i, so pinocchio does the frame change itself.  Frames ``dh1``..``dhn``
    (DH frames) are added as operational frames.
    """
    import pinocchio as pin

    def se3(t):
        return pin.SE3(np.array(t[:3, :3]), np.array(t[:3, 3]))

    model = pin.Model()
    model.gravity = pin.Motion(np.concatenate([np.asarray(gravity, float), np.zeros(3)]))
    parent = 0
    previous_end = np.eye(4)
    for i, row in enumerate(table):
        if row.joint == "R":
            if row.theta != 0.0:
                # dh_forward adds a revolute offset to the joint value; a pinocchio RZ joint
                # cannot, and Tables 3-4 have none
                raise ValueError("non-zero revolute theta offsets are not supported")
            jmodel = pin.JointModelRZ()
            placement = previous_end
        elif row.joint == "P":
            jmodel = pin.JointModelPZ()
            placement = previous_end @ homogeneous(rot_z(row.theta))
        else:
            raise ValueError(f"joint type {row.joint!r}")
        jid = model.addJoint(parent, jmodel, se3(placement), f"joint{i + 1}")
        end = joint_to_dh_frame(row)
        inertia = pin.Inertia(float(masses[i]), np.asarray(coms[i], float),
                              np.asarray(inertias[i], float))
        model.appendBodyToJoint(jid, inertia, se3(end))
        model.addFrame(pin.Frame(f"dh{i + 1}", jid, se3(end), pin.FrameType.OP_FRAME))
        parent = jid
        previous_end = end
    return model


def arm_pinocchio_model(arm: Arm, gravity=GRAVITY):
    return pinocchio_model(arm.dh, arm.masses, arm.coms, arm.inertias, gravity)


# ----------------------------------------------------------------------------- trajectories
T_FINAL = 10.0

PUMA_Q0 = np.zeros(6)
PUMA_QT = np.full(6, PI)
# Stanford: theta_i(0) = 0 for i != 2, 3; theta_2(0) = pi/2; theta_i(T) = pi/3 for i != 3;
# b3(0) = 0, b3(T) = 0.1 m.
STANFORD_Q0 = np.array([0.0, PI / 2, 0.0, 0.0, 0.0, 0.0])
STANFORD_QT = np.array([PI / 3, PI / 3, 0.1, PI / 3, PI / 3, PI / 3])


def cycloidal(q0, qT, t, T: float = T_FINAL):
    """Eqs. (22a-b) / (23): q(t), qd(t), qdd(t) with zero velocity and acceleration at 0 and T.

    q   = q0 + (qT - q0)/T [t - T/(2 pi) sin(2 pi t/T)]
    qd  = (qT - q0)/T [1 - cos(2 pi t/T)]
    qdd = (qT - q0)/T (2 pi/T) sin(2 pi t/T)
    ``t`` scalar or 1-D array; returns arrays of shape (..., n).
    """
    q0 = np.asarray(q0, float)
    qT = np.asarray(qT, float)
    t = np.asarray(t, float)[..., None]
    w = 2.0 * PI / T
    slope = (qT - q0) / T
    q = q0 + slope * (t - np.sin(w * t) / w)
    qd = slope * (1.0 - np.cos(w * t))
    qdd = slope * w * np.sin(w * t)
    return q, qd, qdd


def puma_trajectory(t, T: float = T_FINAL):
    return cycloidal(PUMA_Q0, PUMA_QT, t, T)


def stanford_trajectory(t, T: float = T_FINAL):
    return cycloidal(STANFORD_Q0, STANFORD_QT, t, T)


TRAJECTORIES = {"puma": puma_trajectory, "stanford_arm": stanford_trajectory}
