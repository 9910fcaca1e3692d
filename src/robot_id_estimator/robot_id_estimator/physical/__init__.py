"""Physical parameters. In: the base estimate and the arm's nominal model. Out: standard parameters that meet
Xu et al. 2020's constraints (eqs. 16-18), by a convex program or a multistart, with their plausibility."""
