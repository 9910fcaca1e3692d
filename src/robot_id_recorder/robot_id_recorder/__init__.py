"""Recording of excitation runs into rosbag2 bags, period by period."""
