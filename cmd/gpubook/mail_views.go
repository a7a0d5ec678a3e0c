package main

import "github.com/gpubook/gpubook/views"

// mailViews is the renderer the background jobs and the report commands
// hand to the domain (models/reports, models/notify and the store's
// request reminders): the views' templates in the portal's catalogs, with
// links to cfg.BaseURL and times in the cluster's zone.
func (c *cli) mailViews(cfg Config) *views.Mail {
	return &views.Mail{I18n: c.bundle, BaseURL: cfg.BaseURL, Location: cfg.Location}
}
