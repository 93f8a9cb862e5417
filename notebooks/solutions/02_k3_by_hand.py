# Worked solution: x = pi_ref / pi. Liked token (pi 0.9, pi_ref 0.3): x = 1/3, k1 = log 3 = 1.099,
# k3 = 1/3 + log 3 - 1 = 0.432. Disliked token (pi 0.1, pi_ref 0.3): x = 3, k1 = -log 3 = -1.099,
# k3 = 3 - log 3 - 1 = 0.901. k1 can be negative; k3 never is.
import math

k3_by_hand = {"k1_liked": math.log(3), "k3_liked": 1 / 3 + math.log(3) - 1, "k1_disliked": -math.log(3), "k3_disliked": 2 - math.log(3)}
