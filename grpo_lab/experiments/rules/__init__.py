"""The rules that turn measured numbers into a claim's verdict, one module per theme; each rule takes
{experiment name: result} and returns a findings.Finding (its numbers, its deciding comparisons and a
judge from their directions to a verdict and plain words). claims.py lists which rule tests which claim."""
