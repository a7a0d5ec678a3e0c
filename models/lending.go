package models

import (
	"time"
)

// QuotaLoan is one line of the lending ledger for one quota week:
//   - FromUser → ToUser: a user lends GPU-minutes to a colleague;
//   - FromUser → pool (ToUser nil, TeamID set): a user gives to the team's pool;
//   - pool → ToUser (FromUser nil, TeamID set): a member draws from the pool.
type QuotaLoan struct {
	ID         int64
	WeekStart  time.Time
	FromUser   *int64
	ToUser     *int64
	TeamID     *int64
	GPUMinutes int64
	Note       string
	CreatedAt  time.Time
	// Filled by queries, for display.
	FromName, ToName, TeamName string
}

// LoanBalance is what loans add to (or take from) a user's allowance in
// the week starting at ws, in GPU-minutes.
func LoanBalance(loans []QuotaLoan, userID int64, ws time.Time) int64 {
	var n int64
	for _, l := range loans {
		if !l.WeekStart.Equal(ws) {
			continue
		}
		if l.ToUser != nil && *l.ToUser == userID {
			n += l.GPUMinutes
		}
		if l.FromUser != nil && *l.FromUser == userID {
			n -= l.GPUMinutes
		}
	}
	return n
}

// PoolBalance is what a team's pool holds in the week starting at ws.
func PoolBalance(loans []QuotaLoan, teamID int64, ws time.Time) int64 {
	var n int64
	for _, l := range loans {
		if !l.WeekStart.Equal(ws) || l.TeamID == nil || *l.TeamID != teamID {
			continue
		}
		switch {
		case l.FromUser != nil && l.ToUser == nil:
			n += l.GPUMinutes
		case l.FromUser == nil && l.ToUser != nil:
			n -= l.GPUMinutes
		}
	}
	return n
}

// LoanCheck is what a loan is judged against: the lender's GPU-minutes
// left this week (-1 when no weekly limit applies, which leaves nothing to
// lend) and the pool's balance when drawing.
type LoanCheck struct {
	LenderLeft  int64
	PoolLeft    int64
	SameTeam    bool // borrower or drawer belongs to TeamID, lender to the recipient's team when giving to a pool
	ActorIsFrom bool // the signed-in user is the lender (or the drawer, for a pool draw)
}

// ValidateLoan checks a loan before it is written: a positive amount, a
// lender who has that much left this week, a pool that holds enough, and
// only team members touching a team's pool.
func ValidateLoan(l *QuotaLoan, c LoanCheck) error {
	fe := FieldErrors{}
	fe.Check("note", &l.Note, ShortNote)
	switch {
	case l.GPUMinutes <= 0:
		fe.Add("hours", M("policy.err.loan_amount"))
	case l.FromUser != nil && l.ToUser != nil && *l.FromUser == *l.ToUser:
		fe.Add("to", M("policy.err.loan_self"))
	case l.FromUser != nil && c.LenderLeft < l.GPUMinutes:
		left := c.LenderLeft
		if left < 0 {
			left = 0
		}
		fe.Add("hours", M("policy.err.loan_too_much", "Left", FormatValue(RuleMaxGPUHours, left)))
	case l.FromUser == nil && c.PoolLeft < l.GPUMinutes:
		fe.Add("hours", M("policy.err.pool_too_little", "Left", FormatValue(RuleMaxGPUHours, c.PoolLeft)))
	}
	if l.TeamID != nil && !c.SameTeam {
		fe.Add("to", M("policy.err.loan_team"))
	}
	if l.FromUser == nil && l.ToUser == nil {
		fe.Add("to", M("policy.err.loan_to"))
	}
	return fe.Err()
}
