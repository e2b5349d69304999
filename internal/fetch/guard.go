package fetch

import "github.com/sova-ai/sova/internal/egress"

// AllowHostsEnv is the setting operators use to let the fetcher reach
// addresses it refuses by default. Refusals name it.
const AllowHostsEnv = "SOVA_FETCH_ALLOW_HOSTS"

// ErrBlocked is matched (errors.Is) by every refusal of the address guard
// (the egress package's, under the fetcher's policy).
var ErrBlocked = egress.ErrBlocked

// BlockedError reports a URL, host or IP address the guard refused.
type BlockedError = egress.BlockedError
