package docjob

// CacheKey is the cache key of a conversion of the bytes sha (hex SHA-256) with in's options:
// what a device applying a conversion that ran elsewhere (the cloud) stores its result under, so
// converting the same bytes here again finds it.
func CacheKey(sha string, in Input) Key { return cacheKey(sha, in) }
