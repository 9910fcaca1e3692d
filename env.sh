# Source this file (`source env.sh`) for a shell with the built workspace ready: .venv, the ROS 2
# underlay (a sourced installation or the PyPI wheels) and install/setup.bash. Run `make setup` first.
_robot_id_root=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)
# shellcheck source=/dev/null
source "$_robot_id_root/.venv/bin/activate"
if [ -z "${ROS_DISTRO:-}" ]; then
  export AMENT_PREFIX_PATH=$VIRTUAL_ENV CMAKE_PREFIX_PATH=$VIRTUAL_ENV
fi
# shellcheck source=/dev/null
source "$_robot_id_root/install/setup.bash"
# The command lines and nodes on PATH (`robot_id identify ...`), where `ros2 run` would find them.
for _robot_id_pkg in robot_id_bringup robot_id_excitation robot_id_estimator robot_id_recorder \
    robot_id_sim; do
  PATH="$_robot_id_root/install/$_robot_id_pkg/lib/$_robot_id_pkg:$PATH"
done
unset _robot_id_pkg
export PATH
# One BLAS thread by default: on a 2-core machine with other work, threaded BLAS made the estimator ~10x slower.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
# Discovery stays on this machine unless the user asks otherwise.
export ROS_AUTOMATIC_DISCOVERY_RANGE=${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}
unset _robot_id_root
