package models_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// BenchmarkResetLinkLookup opens a reset link (FindOpenPasswordReset),
// whose lookup also matches tokens mailed before a retry (mailed_tokens),
// among 2,000 open links: "none" with no mailed token stored, "20000"
// with 20,000 of them. The ratio of the two is the subquery's cost as the
// table grows; it should stay near 1 (the subquery reads its index).
func BenchmarkResetLinkLookup(b *testing.B) {
	for _, d := range dbtest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			db := dbtest.Open(b, d)
			ctx := context.Background()
			ws, err := db.EnsureDefaultWorkspace(ctx)
			if err != nil {
				b.Fatal(err)
			}
			owner, err := db.CreateUser(ctx, ws.ID, models.RoleOwner, models.NewUser{Email: "ada@company.com", Name: "Ada", Password: "a long password"})
			if err != nil {
				b.Fatal(err)
			}
			bob, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: "bob@company.com", Name: "Bob", Password: "a long password"})
			if err != nil {
				b.Fatal(err)
			}
			var tokens []string
			for range 2000 {
				_, tok, err := db.CreatePasswordReset(ctx, owner.ID, bob.ID, time.Hour)
				if err != nil {
					b.Fatal(err)
				}
				tokens = append(tokens, tok)
			}
			lookup := func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if _, _, err := db.FindOpenPasswordReset(ctx, tokens[i%len(tokens)]); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.Run("none", lookup)
			rows := make([]models.MailedToken, 20000)
			for i := range rows {
				rows[i] = models.MailedToken{Kind: models.LinkReset, LinkID: int64(i%2000 + 1), TokenHash: fmt.Sprintf("%064x", i), CreatedAt: time.Now().UTC()}
			}
			if err := db.Gorm.CreateInBatches(rows, 500).Error; err != nil {
				b.Fatal(err)
			}
			b.Run("20000", lookup)
		})
	}
}
