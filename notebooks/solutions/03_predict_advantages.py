# Worked solution (a prediction; the cell after it measures it). Mean-centring hands the loss
# r - mean(r): with 0/1 rewards and G = 8 at most 7/8 in size. Z-scoring divides each group by its
# std, which is at most about 0.53 for 0/1 rewards, so every advantage grows; a lone right answer
# reaches (G-1)/sqrt(G) = 2.47. The largest |advantage| per step is larger with z-score.
prediction_advantages = "z-score"
