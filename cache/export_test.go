package cache

// DefaultEstimator returns the estimator of a fresh Session, for the tests
// (production code uses the zero Estimator, which is the same estimate).
func DefaultEstimator() Estimator {
	return Estimator{charsPerToken: DefaultCharsPerToken, ratio: 1, budgetRatio: 1}
}
