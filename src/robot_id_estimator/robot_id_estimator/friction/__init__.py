"""Each joint's friction. In: the regression extended by candidate Coulomb laws, and friction-sweep
recordings. Out: the law each joint's held-out data choose, and the Stribeck fit of Luo et al. 2024.

- coulomb_law_choice: choose_coulomb_laws, with_chosen_laws (its result: results.law_choice)
- sweeps: friction_sweeps; stribeck_fit: fit_stribeck; sweep_choice: sweeps_predicting_worse
"""
