# Worked solution: the most extreme group is one reward apart from G-1 equal others, e.g. one 1
# among seven 0s. Its mean is 1/G and its Bessel std is 1/sqrt(G), so the odd one out gets
# (1 - 1/G) * sqrt(G) = (G - 1) / sqrt(G). For G = 8: 7 / sqrt(8) = 2.47. No group can do more
# (Samuelson's inequality): z-scores are bounded, the "explosion" is of noise, not of size.
largest_zscore_g8 = 7 / 8**0.5
