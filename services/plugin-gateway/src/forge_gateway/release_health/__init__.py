"""Release health from plugins: which rollouts run, asking plugins, storing their figures."""
