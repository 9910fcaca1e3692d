
from glob import glob

from setuptools import find_packages, setup

PACKAGE = 'robot_id_estimator'

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    package_data={PACKAGE: ['output/templates/*.j2']},  # the report pages' templates
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE}']),
        (f'share/{PACKAGE}', ['package.xml']),
        (f'share/{PACKAGE}/config', glob('config/*.yaml')),
    ],
    install_requires=['setuptools'],
    extras_require={'test': ['pytest']},
    zip_safe=True,
    maintainer='robot_id developers',
    maintainer_email='robot_id@example.com',
    description='Base, essential and physical parameter estimation, validation and URDF export.',
    license='Apache-2.0',
    entry_points={'console_scripts': [
        'estimator_node = robot_id_estimator.node:main',
        'robot_id_estimator = robot_id_estimator.__main__:main',
    ]},
)
