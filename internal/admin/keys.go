package admin

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/auth"
	"github.com/sluicehq/sluice/internal/catalog"
	"github.com/sluicehq/sluice/internal/ids"
	"github.com/sluicehq/sluice/internal/store"
)

// KeyInput adds a provider key to a gateway.
type KeyInput struct {
	Provider string            `json:"provider"`
	Alias    string            `json:"alias"`
	Key      string            `json:"key"`
	BaseURL  string            `json:"base_url"`
	Weight   *int              `json:"weight"`
	Models   []string          `json:"models"`
	Options  *store.KeyOptions `json:"options"`
}

const (
	maxKeyBytes    = 4096
	minKeyLen      = 12
	maxKeyModels   = 500
	maxDeployments = 500
	// maxKeysPerGateway bounds the keys of a gateway, like its routes and
	// rules: every proxy loads them all, and a request's key selection
	// walks those of its provider.
	maxKeysPerGateway = 100
)

var (
	aliasRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	// Azure resource names and AWS regions become part of an upstream host
	// name, so they are held to DNS-label characters: nothing in them can
	// move the request to another host.
	azureResourceRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,62}$`)
	awsRegionRE     = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)
	deploymentRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	apiVersionRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$`)
	accessKeyIDRE   = regexp.MustCompile(`^[A-Z0-9]{16,128}$`)
)

// ListKeys lists the provider keys of a gateway. The keys themselves are
// never answered, only their last 4 characters.
func (s *Service) ListKeys(ctx context.Context, p *auth.Principal, gatewayID string) (*List[store.ProviderKey], error) {
	if err := s.can(ctx, p, auth.OpKeyList); err != nil {
		return nil, err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return nil, err
	}
	rows, err := store.All[store.ProviderKey](ctx, s.db, "id", store.Eq("tenant_id", g.TenantID), store.Eq("gateway_id", g.ID))
	if err != nil {
		return nil, fmt.Errorf("list provider keys: %w", err)
	}
	return &List[store.ProviderKey]{Data: rows}, nil
}

// CreateKey adds a provider key to a gateway. The key is sealed at rest;
// the answer and the audit log carry only its last 4 characters.
//
// There is deliberately no way to change where a stored key is sent: its
// base_url cannot be changed on its own, because pointing a stored secret
// at a new host would hand that host the key. Changing the endpoint means
// deleting the key and adding it again, entering the key anew. UpdateKey
// changes only how the key is used (weight, models, disabled).
func (s *Service) CreateKey(ctx context.Context, p *auth.Principal, gatewayID string, in KeyInput) (*store.ProviderKey, error) {
	if err := s.can(ctx, p, auth.OpKeyCreate); err != nil {
		return nil, err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return nil, err
	}
	t, err := store.Get[store.Tenant](ctx, s.db, store.Eq("id", g.TenantID))
	if err != nil {
		return nil, notFound(err, "gateway")
	}
	prov, ok := catalog.LookupProvider(in.Provider)
	if !ok {
		return nil, apierr.Invalid("provider", "unknown provider %q; GET /admin/v1/providers lists them", in.Provider)
	}
	if len(t.Settings.AllowedProviders) > 0 && !slices.Contains(t.Settings.AllowedProviders, prov.ID) {
		return nil, apierr.Invalid("provider", "provider %q is not among the allowed providers of tenant %s", prov.ID, t.ID)
	}
	if !aliasRE.MatchString(in.Alias) {
		return nil, apierr.Invalid("alias", "alias must be 1–63 characters of a-z, 0-9, '_' and '-', starting with a letter or digit")
	}
	key, err := checkKey(in.Key, prov.ID)
	if err != nil {
		return nil, err
	}
	opts := store.KeyOptions{}
	if in.Options != nil {
		opts = *in.Options
	}
	if err := checkKeyOptions(&opts); err != nil {
		return nil, err
	}
	baseURL := strings.TrimRight(in.BaseURL, "/")
	if in.BaseURL != "" && baseURL == "" {
		return nil, apierr.Invalid("base_url", "base_url must be an absolute http or https URL")
	}
	if err := checkBaseURL(ctx, nil, baseURL, s.cfg.AllowPrivateBaseURLs); err != nil {
		return nil, err
	}
	if err := needsBaseURL(prov, baseURL, opts); err != nil {
		return nil, err
	}
	weight := 1
	if in.Weight != nil {
		weight = *in.Weight
	}
	if weight < 1 || weight > 1000 {
		return nil, apierr.Invalid("weight", "weight must be between 1 and 1000")
	}
	models, err := checkKeyModels(in.Models)
	if err != nil {
		return nil, err
	}
	n, err := store.Count[store.ProviderKey](ctx, s.db, store.Eq("tenant_id", g.TenantID), store.Eq("gateway_id", g.ID))
	if err != nil {
		return nil, fmt.Errorf("count provider keys: %w", err)
	}
	if n >= maxKeysPerGateway {
		return nil, apierr.Invalid("", "a gateway has at most %d provider keys", maxKeysPerGateway)
	}
	sealed, err := s.cfg.Box.Seal(key)
	if err != nil {
		return nil, fmt.Errorf("seal provider key: %w", err)
	}
	now := s.now()
	k := &store.ProviderKey{
		ID: ids.New("key"), TenantID: g.TenantID, GatewayID: g.ID, Provider: prov.ID, Alias: in.Alias,
		SealedKey: sealed, Last4: last4(key), BaseURL: baseURL, Weight: weight, Models: models, Options: opts,
		CreatedAt: now, UpdatedAt: now,
	}
	// The audit row names the key by provider, alias and last 4: never the key.
	c := &change{Action: "key.create", ResourceType: "provider_key", ResourceID: k.ID, TenantID: g.TenantID, Config: true,
		Changes: store.Changes{"gateway_id": g.ID, "provider": k.Provider, "alias": k.Alias, "last4": k.Last4,
			"base_url": k.BaseURL, "weight": k.Weight}}
	err = s.write(ctx, p, c, func(tx bun.Tx) error { return store.Insert(ctx, tx, k) })
	if err != nil {
		if ae, ok := apierr.From(err); ok && ae.Code == apierr.CodeConflict {
			return nil, apierr.Conflict("alias", "gateway already has a %s key with alias %q", k.Provider, k.Alias)
		}
		return nil, err
	}
	return k, nil
}

// DeleteKey removes a provider key from a gateway. A key that a route of
// the gateway names (key_alias) is refused with 409: the route could never
// be served without it.
func (s *Service) DeleteKey(ctx context.Context, p *auth.Principal, gatewayID, provider, alias string) error {
	if err := s.can(ctx, p, auth.OpKeyDelete); err != nil {
		return err
	}
	g, err := s.gateway(ctx, s.db, p, gatewayID)
	if err != nil {
		return err
	}
	k, err := store.Get[store.ProviderKey](ctx, s.db, store.Eq("tenant_id", g.TenantID), store.Eq("gateway_id", g.ID),
		store.Eq("provider", provider), store.Eq("alias", alias))
	if isNotFound(err) {
		return s.missing(ctx, p, "provider key", provider+"/"+alias, reasonNotVisible)
	}
	if err != nil {
		return notFound(err, "provider key")
	}
	c := &change{Action: "key.delete", ResourceType: "provider_key", ResourceID: k.ID, TenantID: g.TenantID, Config: true,
		Changes: store.Changes{"gateway_id": g.ID, "provider": k.Provider, "alias": k.Alias, "last4": k.Last4}}
	return s.write(ctx, p, c, func(tx bun.Tx) error {
		// Read in the transaction, so that a route written meanwhile is seen.
		cur, err := store.Get[store.Gateway](ctx, tx, store.Eq("id", g.ID))
		if err != nil {
			return notFound(err, "gateway")
		}
		if route, ok := routeNaming(cur.Routes, k.Provider, k.Alias); ok {
			return apierr.Conflict("alias", "route %q uses the %s key %q; change the route before deleting the key", route, k.Provider, k.Alias)
		}
		n, err := store.Delete[store.ProviderKey](ctx, tx, store.Eq("id", k.ID))
		if err == nil && n == 0 {
			return apierr.NotFound("provider key") // deleted concurrently
		}
		return err
	})
}

// anyKeyProviders are the providers that may run without a real key:
// Ollama and self-hosted OpenAI-compatible servers (vLLM, llama.cpp)
// accept any key ("ollama", "EMPTY") or none. Their keys may be short or
// empty; an empty key is sent as no credential header at all.
var anyKeyProviders = []string{"ollama", "openai-compatible"}

// checkKey validates the key of a provider key and returns it without
// surrounding whitespace (a pasted key often carries a newline). Messages
// never echo the key.
func checkKey(raw, provider string) (string, error) {
	key := strings.TrimSpace(raw)
	anyKey := slices.Contains(anyKeyProviders, provider)
	if key == "" {
		if anyKey {
			return "", nil
		}
		return "", apierr.Invalid("key", "key is required")
	}
	if len(key) > maxKeyBytes {
		return "", apierr.Invalid("key", "key is longer than %d bytes", maxKeyBytes)
	}
	if !utf8.ValidString(key) {
		return "", apierr.Invalid("key", "key is not valid UTF-8")
	}
	for _, r := range key {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return "", apierr.Invalid("key", "key contains a space or a non-printable character")
		}
	}
	if !anyKey && utf8.RuneCountInString(key) < minKeyLen {
		return "", apierr.Invalid("key", "key is shorter than %d characters: too short to be a real provider key", minKeyLen)
	}
	return key, nil
}

// last4 returns the last 4 characters of key, the only part ever shown.
func last4(key string) string {
	r := []rune(key)
	return string(r[max(len(r)-4, 0):])
}

// needsBaseURL refuses a key without base_url for providers that have no
// default endpoint: openai-compatible always, Azure OpenAI unless
// options.resource names the resource, Bedrock unless options.region names
// the region.
func needsBaseURL(prov catalog.Provider, baseURL string, opts store.KeyOptions) error {
	if baseURL != "" {
		return nil
	}
	switch {
	case prov.ID == "azure-openai" && opts.Resource != "":
		return nil
	case prov.Schema == catalog.SchemaBedrock && opts.Region == "":
		return apierr.Invalid("options.region", "a bedrock key needs options.region (or a base_url)")
	case prov.BaseURLRequired:
		if prov.ID == "azure-openai" {
			return apierr.Invalid("base_url", "an azure-openai key needs base_url or options.resource")
		}
		return apierr.Invalid("base_url", "provider %s has no default endpoint: base_url is required", prov.ID)
	}
	return nil
}

func checkKeyOptions(o *store.KeyOptions) error {
	if o.Resource != "" && !azureResourceRE.MatchString(o.Resource) {
		return apierr.Invalid("options.resource", "options.resource must be an Azure resource name (letters, digits and '-')")
	}
	if o.Region != "" && !awsRegionRE.MatchString(o.Region) {
		return apierr.Invalid("options.region", "options.region must be an AWS region such as us-east-1")
	}
	if o.APIVersion != "" && !apiVersionRE.MatchString(o.APIVersion) {
		return apierr.Invalid("options.api_version", "options.api_version must be a version such as 2024-10-21")
	}
	if o.AccessKeyID != "" && !accessKeyIDRE.MatchString(o.AccessKeyID) {
		return apierr.Invalid("options.access_key_id", "options.access_key_id must be an AWS access key id (A-Z, 0-9)")
	}
	if len(o.Deployments) > maxDeployments {
		return apierr.Invalid("options.deployments", "options.deployments has more than %d entries", maxDeployments)
	}
	for model, dep := range o.Deployments {
		if err := checkText("options.deployments", model, 256, true); err != nil {
			return err
		}
		if !deploymentRE.MatchString(dep) {
			return apierr.Invalid("options.deployments", "deployment name for %q must be letters, digits, '.', '_' and '-'", model)
		}
	}
	return nil
}

func checkKeyModels(in []string) (store.StringList, error) {
	if len(in) > maxKeyModels {
		return nil, apierr.Invalid("models", "a key lists at most %d models", maxKeyModels)
	}
	out := make(store.StringList, 0, len(in))
	for i, m := range in {
		if err := checkText(fmt.Sprintf("models[%d]", i), m, 256, true); err != nil {
			return nil, err
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}
