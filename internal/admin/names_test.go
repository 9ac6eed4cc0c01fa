package admin

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sluicehq/sluice/internal/auth"
)

// TestNames: on both stores, Names names objects of the caller's tenant,
// hides those of another tenant (the Administrator sees them) and users
// from roles that may not read them, says which ids are gone, and reads
// more ids than fit one IN list in several queries, naming every one.
func TestNames(t *testing.T) {
	forEachBackend(t, func(t *testing.T, s *Service) {
		ctx := context.Background()
		root := platformAdmin(t, s)
		acme := mkGateway(t, s, root, "acme")
		other := mkGateway(t, s, root, "other")
		ta := mkUser(t, s, "acme", auth.TenantAdministrator)
		aim := mkUser(t, s, "acme", auth.AIManager)
		fin := mkUser(t, s, "acme", auth.Finance)
		stranger := mkUser(t, s, "other", auth.Member)

		ids := []string{acme.ID, other.ID, "gw_gone"}
		want := map[string]ObjectRef{
			acme.ID:   {Kind: RefGateway, ID: acme.ID, Name: "prod", State: RefNamed},
			other.ID:  {Kind: RefGateway, ID: other.ID, State: RefHidden},
			"gw_gone": {Kind: RefGateway, ID: "gw_gone", State: RefDeleted},
		}
		got, err := s.Names(ctx, ta, RefGateway, ids)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("gateways for a Tenant Administrator (-want +got):\n%s", d)
		}
		want[other.ID] = ObjectRef{Kind: RefGateway, ID: other.ID, Name: "prod", State: RefNamed}
		if got, _ = s.Names(ctx, root, RefGateway, ids); !cmp.Equal(want, got) {
			t.Errorf("gateways for the Administrator: %v, want %v", got, want)
		}

		users := []string{ta.UserID, stranger.UserID}
		for _, tt := range []struct {
			p    *auth.Principal
			want map[string]string
		}{
			{ta, map[string]string{ta.UserID: RefNamed, stranger.UserID: RefHidden}},
			{fin, map[string]string{ta.UserID: RefNamed, stranger.UserID: RefHidden}},
			{aim, map[string]string{ta.UserID: RefHidden, stranger.UserID: RefHidden}},
			{root, map[string]string{ta.UserID: RefNamed, stranger.UserID: RefNamed}},
		} {
			got, err := s.Names(ctx, tt.p, RefUser, users)
			if err != nil {
				t.Fatal(err)
			}
			states := map[string]string{}
			for id, r := range got {
				states[id] = r.State
				if (r.State == RefNamed) != (r.Name != "") {
					t.Errorf("%s: %+v has a name only when named", tt.p.Role, r)
				}
			}
			if d := cmp.Diff(tt.want, states); d != "" {
				t.Errorf("users for %s (-want +got):\n%s", tt.p.Role, d)
			}
		}

		many := []string{acme.ID}
		for i := range maxNamesPerQuery + 10 {
			many = append(many, fmt.Sprintf("gw_%04d", i))
		}
		got, err = s.Names(ctx, ta, RefGateway, many)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(many) || got[acme.ID].Name != "prod" || got["gw_0509"].State != RefDeleted {
			t.Errorf("%d ids named %d, %+v, %+v", len(many), len(got), got[acme.ID], got["gw_0509"])
		}
		if got, _ := s.Names(ctx, ta, "model_price", []string{"openai/gpt-4o"}); len(got) != 0 {
			t.Errorf("a kind without names: %v", got)
		}
	})
}
