from setuptools import find_packages, setup

PACKAGE = 'robot_id_lab'

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE}']),
        (f'share/{PACKAGE}', ['package.xml']),
    ],
    install_requires=['setuptools'],
    extras_require={'test': ['pytest']},
    zip_safe=True,
    maintainer='robot_id developers',
    maintainer_email='robot_id@example.com',
    description='The lab: the wall-clock test bed, synthetic data and the checks against the simulated truth.',
    license='Apache-2.0',
    entry_points={'console_scripts': [
        'slow_subscriber = robot_id_lab.slow_subscriber:main',
    ]},
)
