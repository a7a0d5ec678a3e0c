package views

import (
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpubook/gpubook/models"
	"github.com/gpubook/gpubook/views/i18n"
)

func testEnv(lang string) EmailEnv {
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	return EmailEnv{T: i18n.MustLoad().For(lang), BaseURL: "https://gpubook.example.org/", Location: shanghai, Name: "Ada"}
}

func TestRenderTestEmailInBothLanguages(t *testing.T) {
	sent := time.Date(2026, 12, 7, 0, 30, 0, 0, time.UTC)
	tests := []struct {
		lang, subject, heading, greeting, sentAt, prefs string
	}{
		{"en", "gpubook test email", "Mail delivery works", "Hello Ada,", "Sent at 2026-12-07 08:30 CST.", "Change which emails you receive: https://"},
		{"zh-CN", "gpubook 测试邮件", "邮件发送正常", "Ada，您好：", "发送时间：2026-12-07 08:30 CST。", "更改您接收的邮件： https://"},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			subject, text, html, err := RenderEmail(testEnv(tt.lang), "test", TestEmail{SentAt: sent})
			if err != nil {
				t.Fatal(err)
			}
			if subject != tt.subject {
				t.Errorf("subject %q, want %q", subject, tt.subject)
			}
			for _, want := range []string{tt.greeting, tt.heading, tt.sentAt, "-- \n", tt.prefs + "gpubook.example.org/profile#email"} {
				if !strings.Contains(text, want) {
					t.Errorf("text lacks %q:\n%s", want, text)
				}
			}
			doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
			if err != nil {
				t.Fatal(err)
			}
			if got := doc.Find("html").AttrOr("lang", ""); got != tt.lang {
				t.Errorf("html lang %q", got)
			}
			if got := doc.Find("title").Text(); got != tt.subject {
				t.Errorf("title %q", got)
			}
			body := doc.Find(`[data-testid="email-body"]`).Text()
			for _, want := range []string{tt.greeting, tt.heading, tt.sentAt} {
				if !strings.Contains(body, want) {
					t.Errorf("html body lacks %q", want)
				}
			}
			if href, _ := doc.Find(`[data-testid="email-footer"] a`).Attr("href"); href != "https://gpubook.example.org/profile#email" {
				t.Errorf("preferences link %q", href)
			}
			if n := doc.Find("script, svg, link, style, img").Length(); n != 0 {
				t.Errorf("%d elements that mail clients drop or block", n)
			}
		})
	}
}

func TestRenderEmailErrors(t *testing.T) {
	if _, _, _, err := RenderEmail(testEnv("en"), "nope", nil); err == nil {
		t.Error("unknown kind rendered")
	}
	if _, _, _, err := RenderEmail(testEnv("en"), "test", "wrong data"); err == nil || !strings.Contains(err.Error(), "TestEmail") {
		t.Errorf("wrong data type: %v", err)
	}
}

func TestEmailMessage(t *testing.T) {
	u := &models.User{ID: 17, Email: "ada@example.org", Language: "zh-CN"}
	m, err := EmailMessage(testEnv(u.Language), "test", "test:1", u, TestEmail{SentAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != "test" || m.DedupKey != "test:1" || m.ToUserID == nil || *m.ToUserID != 17 || m.ToEmail != u.Email ||
		m.Lang != "zh-CN" || m.Subject != "gpubook 测试邮件" || m.TextBody == "" || m.HTMLBody == "" ||
		m.UnsubscribeURL != "https://gpubook.example.org/profile#email" {
		t.Errorf("message %+v", m)
	}
	if err := m.Validate(); err != nil {
		t.Errorf("rendered message does not validate: %v", err)
	}
}
