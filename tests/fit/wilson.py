"""The 95% Wilson score interval, in percent, as the checks of run.sh and
corpus.sh compute it independently of slopctl fit and bench/corpus-eval."""
import math

Z = 1.959963984540054


def wilson(k, n):
    p = k / n
    d = 1 + Z * Z / n
    c = (p + Z * Z / (2 * n)) / d
    h = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / d
    return 100 * max(0, c - h), 100 * min(1, c + h)
