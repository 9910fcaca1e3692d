from glob import glob

from setuptools import find_packages, setup

PACKAGE = 'robot_id_bringup'

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE}']),
        (f'share/{PACKAGE}', ['package.xml']),
        (f'share/{PACKAGE}/launch', glob('launch/*.launch.py')),
        (f'share/{PACKAGE}/config', glob('config/*.yaml')),
        (f'share/{PACKAGE}/rviz', glob('rviz/*.rviz')),
    ],
    install_requires=['setuptools'],
    extras_require={'test': ['pytest']},
    zip_safe=True,
    maintainer='robot_id developers',
    maintainer_email='robot_id@example.com',
    description='Launch files and the offline demo of the robot_id suite.',
    license='Apache-2.0',
    entry_points={'console_scripts': [
        'offline_demo = robot_id_bringup.offline_demo:main',
        'robot_id = robot_id_bringup.__main__:main',
    ]},
)
