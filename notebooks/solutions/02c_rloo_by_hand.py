# Worked solution: rewards [1, 0, 0, 0]. The right answer's others are three 0s, baseline 0: advantage 1.
# A wrong answer's others are 1, 0, 0, baseline 1/3: advantage -1/3. Mean-only subtracts 1/4 from
# everyone: 0.75 and -0.25. In general r_i - mean(others) = G/(G-1) * (r_i - mean(all)), so the ratio is 4/3.
rloo_by_hand = {"right": 1.0, "wrong": -1 / 3, "ratio_to_mean": 4 / 3}
