"""Identification of the dynamic parameters (masses, centres of mass, inertias, springs,
friction) from logged motion: the regressor through the closed loops (regressor.py), base
parameters (base.py), estimates (estimate.py), logs in ROS's formats (logs.py), the updated
model file (model_file.py) and excitation trajectories (excitation.py)."""
