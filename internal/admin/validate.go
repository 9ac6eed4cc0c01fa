package admin

import (
	"context"

	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/internal/apierr"
	"github.com/sluicehq/sluice/internal/ssrf"
)

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,62}$`)

// checkSlug validates a tenant id or gateway slug.
func checkSlug(param, v string) error {
	if !slugRE.MatchString(v) {
		return apierr.Invalid(param, "%s must be 2–63 characters of a-z, 0-9 and '-', starting with a letter or digit", param)
	}
	return nil
}

// checkText validates a free-text field: valid UTF-8, no control
// characters, at most max bytes, and (when required) not empty.
func checkText(param, v string, max int, required bool) error {
	if required && strings.TrimSpace(v) == "" {
		return apierr.Invalid(param, "%s is required", param)
	}
	if len(v) > max {
		return apierr.Invalid(param, "%s is longer than %d bytes", param, max)
	}
	if !utf8.ValidString(v) {
		return apierr.Invalid(param, "%s is not valid UTF-8", param)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return apierr.Invalid(param, "%s contains a control character", param)
		}
	}
	return nil
}

// Resolver looks up host addresses; net.DefaultResolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// checkBaseURL validates an admin-set provider base URL: http(s) only, no
// user info, query or fragment, and no address that could reach cloud
// metadata or link-local services. With allowPrivate false, loopback and
// private ranges are refused too. Hostnames are resolved and every address
// checked (the dialer checks again at connect time, against rebinding).
func checkBaseURL(ctx context.Context, r Resolver, raw string, allowPrivate bool) error {
	return checkOutboundURL(ctx, r, "base_url", raw, allowPrivate)
}

// checkOutboundURL applies the rule of checkBaseURL to any URL Sluice
// connects to on an admin's word (provider base URLs, alert webhooks);
// param names the field in errors.
func checkOutboundURL(ctx context.Context, r Resolver, param, raw string, allowPrivate bool) error {
	if raw == "" {
		return nil
	}
	if len(raw) > 2048 {
		return apierr.Invalid(param, "%s is too long", param)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return apierr.Invalid(param, "%s must be an absolute http or https URL", param)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return apierr.Invalid(param, "%s may not contain user info, a query or a fragment", param)
	}
	host := u.Hostname()
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "metadata.google.internal" || h == "metadata" {
		return apierr.Invalid(param, "%s may not point at a metadata host", param)
	} else if strings.HasSuffix(h, ".internal") && !allowPrivate {
		return apierr.Invalid(param, "%s may not point at an internal host unless Sluice runs with %s", param, privateUpstreamsSwitch)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addrs = []netip.Addr{a}
	} else if looksNumeric(host) {
		// Decimal, octal or hex IPv4 forms (http://2852039166/) that some
		// clients accept but ParseAddr does not.
		return apierr.Invalid(param, "%s uses a numeric host form that is not allowed; write the address in dotted form", param)
	} else {
		if r == nil {
			r = net.DefaultResolver
		}
		addrs, err = r.LookupNetIP(ctx, "ip", host)
		if err != nil || len(addrs) == 0 {
			return apierr.Invalid(param, "%s host %q does not resolve", param, host)
		}
	}
	for _, a := range addrs {
		why := ForbiddenAddr(a, allowPrivate)
		switch {
		case why == "":
		case ForbiddenAddr(a, true) == "":
			// Refused only because private upstreams are off: name the
			// switch that allows them.
			return apierr.Invalid(param, "%s resolves to a %s address, which is allowed only when Sluice runs with %s (self-hosted models)", param, why, privateUpstreamsSwitch)
		default:
			return apierr.Invalid(param, "%s resolves to a %s address, which is not allowed", param, why)
		}
	}
	return nil
}

// privateUpstreamsSwitch names the setting that lets base URLs point at
// loopback and private addresses (cmd/sluice: --allow-private-upstreams,
// which Config.AllowPrivateBaseURLs carries); refusals that it would lift
// name it, so an operator of a local Ollama or vLLM knows what to set.
const privateUpstreamsSwitch = "--allow-private-upstreams (SLUICE_ALLOW_PRIVATE_UPSTREAMS=true)"

func looksNumeric(host string) bool {
	if host == "" {
		return false
	}
	for _, c := range strings.ToLower(host) {
		if !(c >= '0' && c <= '9' || c == '.' || c == 'x' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	// Hex-only hostnames like "cafe" are real names; numeric forms start with a digit.
	return host[0] >= '0' && host[0] <= '9'
}

// ForbiddenAddr says why an upstream address is refused, or "" when it is
// allowed: the one rule of package ssrf, which the provider client's
// dialer applies again at connect time.
func ForbiddenAddr(a netip.Addr, allowPrivate bool) string {
	return ssrf.Reason(a, allowPrivate)
}
