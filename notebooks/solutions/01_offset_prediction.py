# Worked solution (a prediction; the measurement is data/results/offset-and-scale.json).
# Reasoning: the offset adds c * score to every answer's term. Its expectation is zero (01 section 2),
# so the *expected* gradient still points towards right answers; but its noise grows like c^2
# (section 3), and with the gradient norm clipped to 1 every step moves a fixed distance in a
# direction that is mostly noise. The signal is too small to add up in 100 steps: held-out
# accuracy stays around where it started (it wanders, and varies a lot between seeds), while the
# same offset does nothing at all to the mean and z-score baselines.
offset_prediction = "flat"
