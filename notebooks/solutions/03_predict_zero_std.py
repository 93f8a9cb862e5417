# Worked solution: two answers agree (both right or both wrong) with probability p^2 + (1-p)^2,
# which is at least 1/2; sixteen answers all agree with probability p^16 + (1-p)^16, almost never
# for a policy that is right about half the time. So G = 2 has far more groups with no spread.
prediction_zero_std = "G = 2"
