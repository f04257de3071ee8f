package handlers

import (
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/static"
	"github.com/batcheval/batcheval/web"
)

// themeOf is the colour theme the person chose (the theme cookie), or ""
// to follow the system setting. Unknown values count as no choice.
func themeOf(c echo.Context) string {
	ck, err := c.Cookie(web.ThemeCookie)
	if err != nil {
		return ""
	}
	switch ck.Value {
	case web.ThemeLight, web.ThemeDark:
		return ck.Value
	}
	return ""
}

// themeCookieAge keeps a theme choice for a year: it is a preference, not
// a credential.
const themeCookieAge = 365 * 24 * time.Hour

// setTheme stores the chosen theme (light, dark, or empty for the system
// setting) in a cookie and goes back to the page the toggle was on. It is
// public: the sign-in page has the toggle too.
func setTheme(c echo.Context) error {
	theme := c.FormValue("theme")
	if theme != web.ThemeLight && theme != web.ThemeDark {
		theme = ""
	}
	ck := &http.Cookie{Name: web.ThemeCookie, Value: theme, Path: "/", SameSite: http.SameSiteLaxMode,
		MaxAge: int(themeCookieAge / time.Second)}
	if theme == "" {
		ck.MaxAge = -1
	}
	setCookie(c, ck)
	return c.Redirect(http.StatusSeeOther, localPath(c.FormValue("back")))
}

// localPath is back when it is a path on this site, else "/": the theme
// toggle and the way back after signing in must not become open
// redirects. A browser drops tabs and line breaks from an address before
// reading it (so "/\t/evil.example" is "//evil.example", another site) and
// reads a backslash as a slash, so a path with any control character is
// refused along with "//" and "/\"; the addresses this site links to are
// escaped and never hold one.
func localPath(back string) string {
	if !strings.HasPrefix(back, "/") || strings.HasPrefix(back, "//") || strings.HasPrefix(back, "/\\") ||
		strings.ContainsFunc(back, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "/"
	}
	return back
}

// serveFavicon answers /favicon.ico, which browsers ask for by that name.
func serveFavicon(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=86400")
	return echo.StaticFileHandler("favicon.ico", static.FS)(c)
}
