"""Physical parameters. In: the base estimate and the arm's nominal model. Out: standard parameters that meet
Xu et al. 2020's constraints (eqs. 16-18), by a convex program or a multistart, with their plausibility.

- retrieval: retrieve_physical (the stage); problem: the bounds, RetrievalError
- lmi, lmi_rows, multistart, starts: the two methods; constraints, size_bounds: what both impose
- determination (HELD), plausibility: what the data determine, and the bodies against the URDF
"""
