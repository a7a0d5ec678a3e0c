package models_test

import (
	"math"
	"testing"

	"github.com/gpubook/gpubook/models"
)

func TestFormatHours(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"issue's home figure", 36.016666666666666, "36.02"},
		{"issue's approval figure", 52.733333333333334, "52.73"},
		{"issue's zh figure", 0.7166666666666667, "0.72"},
		{"whole", 40, "40"},
		{"one decimal", 1.5, "1.5"},
		{"quarter", 0.25, "0.25"},
		{"rounds to whole", 2.999, "3"},
		{"tiny", 0.001, "0"},
		{"negative tiny is not -0", -0.001, "0"},
		{"negative", -1.255, "-1.25"},
		{"NaN", math.NaN(), "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := models.FormatHours(tt.in); got != tt.want {
				t.Errorf("FormatHours(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if got, want := models.FormatMinutesAsHours(2161), "36.02"; got != want {
		t.Errorf("FormatMinutesAsHours(2161) = %q, want %q", got, want)
	}
}
