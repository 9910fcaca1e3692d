"""The plumbing every robot_id command line shares (command_line.py): help that shows defaults, checks of inputs
and outputs before any work, progress bars and progress lines. ROS-free and light: it imports tqdm, and
robot_id_model only inside the two helpers that name robots."""
