"""Files a user loads and reads. In: an identification. Out: identified.urdf, identified.xml (MJCF), the report and
its figures, written whole or not at all."""
