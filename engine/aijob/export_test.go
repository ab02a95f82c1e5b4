package aijob

// What the external tests (package aijob_test, which can import aisqlite) read of the Service's
// insides.

// OfflineDeferrals returns how many offline deferrals in a row s has made.
func OfflineDeferrals(s *Service) int32 { return s.offline.Load() }

// CachedEligibilityOf is s.cachedEligibility.
var CachedEligibilityOf = (*Service).cachedEligibility
