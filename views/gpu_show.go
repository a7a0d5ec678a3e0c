package views

import "github.com/gpubook/gpubook/models"

// GPUView is one GPU's page: who holds it now and what comes next.
type GPUView struct {
	GPU      models.GPU
	Current  *models.Booking // the booking running now, if any
	Upcoming []models.Booking
}
