"""Base and essential parameters. In: the reduced regression. Out: WLS or OLS base parameters with their RSD
(Xu et al. 2020, eqs. 5-7) and the essential set by iterative elimination.

- base_stage: estimate_base, BaseEstimate (the stage)
- least_squares: the reduced system, its solution, essential_parameters, condition_number, rsd_filter_factor
"""
