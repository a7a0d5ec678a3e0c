package mail

import (
	"errors"

	gomail "github.com/wneessen/go-mail"

	"github.com/gpubook/gpubook/models"
)

// classify decides what a send's error means for the message.
//
//   - The server accepted the data (go-mail marks the message delivered):
//     success, even if saying goodbye failed afterwards.
//   - The connection failed after the end of the data, with no reply: the
//     server may have queued it. Unknown, never resent.
//   - A 5xx reply to the recipient or to the data: refused for good.
//   - Everything else (no connection, TLS, auth, 4xx, a refused sender that
//     an admin can fix): nothing was accepted, so retry later.
//
// Every failure but a refusal of this one recipient or this one message
// is the server's (ServerDown): the worker stops the round and backs off.
func classify(em *gomail.Msg, err error) error {
	if err == nil || em.IsDelivered() {
		return nil
	}
	de := classifyOutcome(err).(*models.DeliveryError)
	var se *gomail.SendError
	recipient := errors.As(err, &se) && se.Reason == gomail.ErrSMTPRcptTo && se.ErrorCode() >= 400
	de.ServerDown = de.Outcome != models.DeliveryReject && !recipient
	return de
}

// classifyOutcome is classify's outcome, before it tells the server's
// faults apart.
func classifyOutcome(err error) error {
	var se *gomail.SendError
	if !errors.As(err, &se) {
		return &models.DeliveryError{Outcome: models.DeliveryRetry, Err: err}
	}
	code := se.ErrorCode()
	switch se.Reason {
	case gomail.ErrSMTPDataClose:
		switch {
		case code >= 500:
			return &models.DeliveryError{Outcome: models.DeliveryReject, Err: err}
		case code >= 400:
			return &models.DeliveryError{Outcome: models.DeliveryRetry, Err: err}
		}
		return &models.DeliveryError{Outcome: models.DeliveryUnknown, Err: err}
	case gomail.ErrSMTPRcptTo, gomail.ErrSMTPData:
		if code >= 500 {
			return &models.DeliveryError{Outcome: models.DeliveryReject, Err: err}
		}
	case gomail.ErrGetSender, gomail.ErrGetRcpts, gomail.ErrNoUnencoded:
		return &models.DeliveryError{Outcome: models.DeliveryReject, Err: err}
	}
	return &models.DeliveryError{Outcome: models.DeliveryRetry, Err: err}
}
