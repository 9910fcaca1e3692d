"""Each joint's friction. In: the regression extended by candidate Coulomb laws, and friction-sweep
recordings. Out: the law each joint's held-out data choose, and the Stribeck fit of Luo et al. 2024."""
