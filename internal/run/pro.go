package run

import "github.com/sova-ai/sova"

// instructions are the person's custom instructions as the run uses
// them. While they are a pro feature (Options.ProFeatures), a free
// account's are left out: saved while the account was pro, they are kept
// for when it is again.
func (s *Service) instructions(u sova.User, saved string) string {
	if s.opt.ProFeatures && u.Role == sova.RoleFree {
		return ""
	}
	return saved
}
