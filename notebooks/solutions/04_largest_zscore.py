# Worked solution: the most extreme group is one reward apart from G-1 equal others, e.g. one 1
# among fifteen 0s. Its mean is 1/G and its Bessel std is 1/sqrt(G), so the odd one out gets
# (1 - 1/G) * sqrt(G) = (G - 1) / sqrt(G). For G = 16: 15 / 4 = 3.75. No group can do more
# (Samuelson's inequality): z-scores are bounded, the "explosion" is of noise, not of size.
largest_zscore_g16 = 15 / 16**0.5
