from setuptools import find_packages, setup

PACKAGE = 'robot_id_excitation'

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
    description='Optimal excitation trajectories and the node that commands them.',
    license='Apache-2.0',
    entry_points={'console_scripts': [
        'excitation_node = robot_id_excitation.node:main',
        'robot_id_excitation = robot_id_excitation.__main__:main',
    ]},
)
