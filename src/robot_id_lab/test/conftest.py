"""Keep every node these tests start on this machine and in a domain of its own."""

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 100)
