# Worked solution: with an offset of 3 and no baseline every sampled answer, right or wrong, is
# pushed up by about 3, and only the small difference between right and wrong carries signal; the
# gradient is mostly noise and accuracy barely moves. The group mean removes the offset exactly, so
# "mean only" learns as it does without an offset and ends higher.
prediction_offset = "mean only"
