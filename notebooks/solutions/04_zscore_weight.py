# Worked solution: z-scoring is mean-centring divided by the group's std. With 0/1 rewards and a
# large group, the std is close to the Bernoulli std sqrt(p (1 - p)), so a prompt with success
# rate p is weighted 1 / sqrt(p (1 - p)) relative to mean-centring: 2 at p = 0.5, 4.6 at p = 0.05.
# (At G = 8 the sample std fluctuates and lopsided groups are often tied, which flattens the curve:
# that is the U of notebook 02c section 4.)
def zscore_weight(p):
    return 1 / (p * (1 - p)) ** 0.5
