#!/usr/bin/env bash
# The numerical core's tests on the dependency floors: scripts/setup.sh builds a second venv
# with pip held to scripts/constraints-floor.txt (numpy, numba, scipy, PyYAML, matplotlib at the
# oldest versions setup.py accepts: test/test_jit_fallback.py checks they agree), compiles every
# kernel there (charmie-dynamics compile: numba 0.57 takes minutes) and runs the core's test
# files (CORE below: kinematics, inverse and forward dynamics, the mechanisms and closed chains,
# the kernels compiled and as plain Python, the simulator's step, the identification's
# regressor; against Pinocchio and the closed forms). Not here: the nodes and launch files
# (rclpy and DDS, which the floors do not change), the CLI, studies, identification runs,
# datasets and the view, whose extra kernel signatures numba 0.57 compiles for minutes each
# (the whole suite there took 30 min of CI's 40); .venv and Jazzy's venv run all of them.
#
#   scripts/test_floors.sh [PYTEST_ARGS ...]      (default: the CORE files, not ros or launch)
#                                                 venv: $CHARMIE_FLOOR_VENV, else under $TMPDIR
#   scripts/test_floors.sh test                   the whole suite
#
# The kernels compiled by this numba are cached in the venv, apart from those of .venv: numba
# keeps one index per function, so two numba versions sharing a cache would overwrite each other.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(realpath -m -- "${CHARMIE_FLOOR_VENV:-${TMPDIR:-/tmp}/charmie_dynamics-venv-floor}")
start=$SECONDS
export PIP_CONSTRAINT=$PWD/scripts/constraints-floor.txt NUMBA_CACHE_DIR=$venv/numba-cache
CHARMIE_VENV=$venv scripts/setup.sh
echo "test_floors: venv $venv ready in $((SECONDS - start)) s; running the test suite"
# pinocchio is the tests' oracle. The pin that installs beside numpy 1.23 is 2.6.20 (every
# pin 3 wheel needs cmeel-boost >= 1.87, which needs numpy >= 2.2); these tests use pin 3's API
# (a frame without a parent frame, URDF mimic joints), so they are deselected here (pytest
# counts them) and run in .venv only.
pin3_only='test_pinocchio_dh_frames_match_dh_product or test_pinocchio_joint_frames_match or
  test_pinocchio_inertias_placed_as_in_dh_frames or test_gravity_direction or
  test_yaml_dynamics_match_dh_pinocchio or mimic_as_mimic or
  test_published_arms_free_fall_against_pinocchio or test_published_arms_along_seed002_trajectories or
  test_forward_dynamics_matches_pinocchio_spatial or test_five_bar_forward_dynamics_matches_pinocchio or
  test_free_fall_matches_pinocchio_constraint_dynamics or test_simulator_runs_the_free_fall or
  (against_pinocchio and True) or test_chain_against_pinocchio'
# The closed chains' Pinocchio checks use pin 3's constraintDynamics (pin.ContactType); the
# helical joint's, pin 3's JointModelHelicalUnaligned (the [...-True] cases of
# test_joint_transform's random trees and test_helical_joint's chain).
status=0
CORE=(inverse_dynamics forward_kinematics forward_dynamics kernels dh_references joint_transform
      evaluator closed_chains indirect_joints actuation validation_motions jit_fallback
      edge_models moving_tree motion_pass free_flyer helical_joint torsion_spring loop_evaluator
      irsbot2 scraping_machine identification_regressor actuated_step)
# and not the ABA on arrays of every layout the kernel takes (each layout a compile of the
# ABA, minutes on numba 0.57: 20 % of the core's files in 6 min of CI, measured), nor
# forward_dynamics' unchecked route on those layouts (four layouts of both methods: 615 s of
# numba 0.57's compiling on this repo's 2-core machine, measured on a cold cache)
deselect=""
if [ $# -eq 0 ]; then
  files=()
  for name in "${CORE[@]}"; do files+=("test/test_$name.py"); done
  set -- -m "not ros and not launch" "${files[@]}"
  deselect=" or test_aba_arrays_as_the_kernel_takes_them or test_arrays_as_the_kernel_takes_them_give_the_checked_paths_numbers"
fi
"$venv/bin/python" -m pytest -q -k "not (${pin3_only//$'\n'/ }$deselect)" "$@" || status=$?
echo "test_floors: done in $((SECONDS - start)) s (pytest exit status $status)"
exit "$status"
