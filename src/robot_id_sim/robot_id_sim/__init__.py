"""MuJoCo simulated arm that speaks the topics of lbr_fri_ros2_stack and franka_ros2."""
