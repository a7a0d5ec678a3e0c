package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gpubook/gpubook/models"
)

// langCookie holds the language a visitor chose with the switch. It is a
// cookie and never the session: a stored session per anonymous switch let
// anyone fill the sessions table with rows that live for days (1,000
// posts of /lang, 1,000 rows). A signed-in user's choice is also in the
// profile; the cookie keeps it on the pages after sign-out.
const langCookie = "gpubook_lang"

// langCookieAge is how long a browser keeps the choice: a year.
const langCookieAge = 365 * 24 * 60 * 60

// setLangCookie remembers lang (a valid language) in the browser; ""
// (follow the browser's own) forgets the choice.
func (b *Base) setLangCookie(c echo.Context, lang string) {
	age := langCookieAge
	if lang == "" {
		age = -1
	}
	c.SetCookie(&http.Cookie{Name: langCookie, Value: lang, Path: "/", MaxAge: age, HttpOnly: true,
		Secure: b.Sessions.Cookie.Secure, SameSite: http.SameSiteLaxMode})
}

// cookieLang is the language of the visitor's cookie, or "" when it has
// none or one the portal does not speak (the client chose its value).
func cookieLang(c echo.Context) string {
	ck, err := c.Cookie(langCookie)
	if err != nil || !models.ValidLanguage(ck.Value) {
		return ""
	}
	return ck.Value
}
