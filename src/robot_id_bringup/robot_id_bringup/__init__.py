"""Launch files, robot descriptions and configs of the robot_id suite."""
