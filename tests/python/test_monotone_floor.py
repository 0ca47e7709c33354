"""scenarios/papers/megatron/vtrain/monotone_floor.py: its two fits of T = M·f(b) + c, on runs whose
answers are derived by hand. Pure Python (no dnnsim module), run by ctest from the source tree.
"""
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scenarios/papers/megatron/vtrain"))
import monotone_floor  # noqa: E402


class Isotonic(unittest.TestCase):
    def test_pools_violators_into_their_weighted_mean(self):
        # (3, 1, 2): 3 > 1 pools to 2 (weight 2), which equals the next value: the constant 2, whose
        # squared error 2 beats any other non-decreasing sequence (e.g. (1.5, 1.5, 2): 2.5).
        self.assertEqual(monotone_floor.isotonic([3, 1, 2], [1, 1, 1]), [2, 2, 2])
        # Weights 1 and 3: (4·1 + 0·3) / 4 = 1.
        self.assertEqual(monotone_floor.isotonic([4, 0], [1, 3]), [1, 1])
        self.assertEqual(monotone_floor.isotonic([1, 2, 3], [1, 1, 1]), [1, 2, 3])


class Fit(unittest.TestCase):
    def test_runs_of_the_form_are_fitted_exactly_by_both(self):
        # f(1) = 50 ms, f(2) = 60 ms, c = 5 ms (on the fit's 0.25 ms grid): (M, b, T).
        runs = [(m, b, m * {1: 0.050, 2: 0.060}[b] + 0.005) for m, b in ((4, 1), (8, 1), (2, 2), (4, 2))]
        for monotone in (False, True):
            errors, c, f = monotone_floor.fit(runs, monotone)
            self.assertLess(max(map(abs, errors)), 1e-9)
            self.assertAlmostEqual(c, 0.005)
            self.assertAlmostEqual(f[2], 0.060)

    def test_less_time_for_more_work_is_what_the_monotone_fit_cannot_follow(self):
        # f(1) = 0.10 s, f(2) = 0.08 s, c = 0: runs (M 4, b 1, 0.4 s) and (M 2, b 2, 0.16 s). The free
        # fit is exact. The monotone one needs f(1) ≤ f(2); a shared f and c would be f = 0.12,
        # c = −0.08, so with c ≥ 0 the convex optimum is at c = 0: per run a = M/T = 10 and 12.5,
        # targets 0.10 and 0.08 with weights a² = 100 and 156.25, pooled f = (10 + 12.5) / 256.25 =
        # 0.0878049; errors 4f/0.4 − 1 = −0.121951 and 2f/0.16 − 1 = +0.097561.
        runs = [(4, 1, 0.4), (2, 2, 0.16)]
        errors, _, _ = monotone_floor.fit(runs, monotone=False)
        self.assertLess(max(map(abs, errors)), 1e-9)
        errors, c, f = monotone_floor.fit(runs, monotone=True)
        self.assertEqual(c, 0.0)
        self.assertAlmostEqual(f[1], 22.5 / 256.25)
        self.assertAlmostEqual(errors[0], -0.121951, places=6)
        self.assertAlmostEqual(errors[1], 0.097561, places=6)


if __name__ == "__main__":
    unittest.main()
