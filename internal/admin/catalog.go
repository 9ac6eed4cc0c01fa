package admin

import (
	"context"

	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/catalog"
)

// ListProviders lists the upstream providers Sluice can talk to, with their
// capabilities. The list is static and fits one page.
func (s *Service) ListProviders(ctx context.Context, p *auth.Principal) (*List[catalog.Provider], error) {
	if err := s.can(ctx, p, auth.OpProviderList); err != nil {
		return nil, err
	}
	return &List[catalog.Provider]{Data: catalog.Providers()}, nil
}

// ListModels lists the built-in model catalog. The list is static and fits
// one page.
func (s *Service) ListModels(ctx context.Context, p *auth.Principal) (*List[catalog.Model], error) {
	if err := s.can(ctx, p, auth.OpModelList); err != nil {
		return nil, err
	}
	return &List[catalog.Model]{Data: catalog.Models()}, nil
}
