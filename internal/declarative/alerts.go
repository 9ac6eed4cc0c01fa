package declarative

import (
	"fmt"
	"maps"
)

// A tenant's budget-alert webhook (docs/governance.md "Alerts") has a
// signing secret that is write-only, like a provider key's value: reads
// say only whether one is set. The file names where apply reads it, as
// settings.alert_webhook_secret_ref (env:NAME or file:PATH), never the
// value.
const (
	alertURLField       = "alert_webhook_url"
	alertSecretField    = "alert_webhook_secret"
	alertSecretSetField = "alert_webhook_secret_set"
	alertSecretRefField = "alert_webhook_secret_ref"
)

// AlertSecretEnvName is the environment variable export names in a
// tenant's alert_webhook_secret_ref: SLUICE_ALERT_SECRET_ + the tenant id
// in upper case, each run of other characters made one "_" (acme-eu →
// SLUICE_ALERT_SECRET_ACME_EU).
func AlertSecretEnvName(tenant string) string { return envName("SLUICE_ALERT_SECRET", tenant) }

// settingsOf returns a tenant's settings object (nil when it has none).
func settingsOf(t Object) Object {
	s, _ := t["settings"].(Object)
	return s
}

// checkAlertSecret checks a tenant's settings in a file: the secret only
// as a reference, in a valid form.
func checkAlertSecret(t Object) error {
	st := settingsOf(t)
	if _, inline := st[alertSecretField]; inline {
		return fmt.Errorf("tenant %s: settings.%s is write-only and never in the file: name it with settings.%s (env:NAME or file:PATH)",
			str(t["id"]), alertSecretField, alertSecretRefField)
	}
	if ref, ok := st[alertSecretRefField]; ok {
		if _, _, err := splitRef("settings."+alertSecretRefField, str(ref)); err != nil {
			return fmt.Errorf("tenant %s: %w", str(t["id"]), err)
		}
	}
	return nil
}

// resolveAlertSecrets reads every tenant's alert_webhook_secret_ref, by
// tenant id.
func resolveAlertSecrets(file Object, opt Options) (map[string]string, error) {
	out := map[string]string{}
	for _, t := range list(file, "tenants") {
		ref, ok := settingsOf(t)[alertSecretRefField]
		if !ok {
			continue
		}
		v, err := readRef("settings."+alertSecretRefField, str(ref), opt)
		if err != nil {
			return nil, fmt.Errorf("tenant %s: %w", str(t["id"]), err)
		}
		out[str(t["id"])] = v
	}
	return out, nil
}

// withAlertSecret returns a tenant of the file as upsert takes it: its
// settings without the secret's reference and, when the server must be
// sent the secret, with the secret. The server never answers the value, so
// it is sent only when apply knows it is needed: the tenant is created,
// the file changes the webhook URL, or the server has no secret. A new
// secret behind the same reference and URL is not seen (docs/decisions.md).
func withAlertSecret(want Object, cur *node, secret string, has bool) Object {
	st := settingsOf(want)
	if st == nil {
		return want
	}
	if _, ok := st[alertSecretRefField]; !ok {
		return want
	}
	st = omit(st, []string{alertSecretRefField})
	if has {
		url, named := st[alertURLField]
		var curURL any
		if cur != nil {
			curURL = settingsOf(cur.obj)[alertURLField]
		}
		if cur == nil || !cur.alertSecretSet || (named && !covers(url, curURL)) {
			st[alertSecretField] = secret
		}
	}
	out := maps.Clone(want)
	out["settings"] = st
	return out
}

// withoutSecret returns o less a secret withAlertSecret put in its
// settings: what an answer of the server can be compared with.
func withoutSecret(o Object) Object {
	st := settingsOf(o)
	if _, ok := st[alertSecretField]; !ok {
		return o
	}
	out := maps.Clone(o)
	out["settings"] = omit(st, []string{alertSecretField})
	return out
}
