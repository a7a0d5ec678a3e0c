package main

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/gpubook/gpubook/models"
)

// The demo is described by a pure function of a seed and a clock, so that it
// can be tested without a database and looks the same every time it is shown.

type demoNode struct {
	Name      string
	Model     string
	GPUs      int
	MemoryMiB int64
	HomeTeam  string // the team that books this node most
	// MIG splits one GPU into MIG instances, booked as units of their own
	// (their indices on the node are 64 and up, in layout order).
	MIG *demoMIG
}

type demoOutOfService struct {
	Node   string
	Index  int
	Reason string
}

type demoUser struct {
	Email, Name, Language, TimeZone string
	Admin                           bool
	Team                            string // "" for none
	Lead                            bool
}

type demoBooking struct {
	UserEmail  string
	Node       string
	GPUs       []int // indices on the node
	Start, End time.Time
	Note       string
}

type demoData struct {
	Nodes        []demoNode
	OutOfService []demoOutOfService
	Teams        []string
	Users        []demoUser
	Bookings     []demoBooking
}

// demoNotes are realistic booking notes per team, in both languages.
func demoNotes() map[string][]string {
	return map[string][]string{
		"Vision":   {"ResNet-50 ablation", "ViT-B/16 fine-tune on ImageNet-1k", "检测模型训练 (YOLOv8)", "SAM segmentation eval", "扩散模型采样实验", "CLIP linear probe sweep"},
		"NLP":      {"LLM 微调", "LLaMA-7B LoRA fine-tune", "BERT distillation", "tokenizer 对比实验", "RAG eval run", "长文本推理测试"},
		"Robotics": {"PPO locomotion sweep", "Isaac Gym sim batch", "抓取策略训练", "world model pretraining", "VLA policy eval", "sim2real 域随机化"},
	}
}

// demoPlan describes the demo cluster: three nodes, a dozen people in three
// teams, and a week of non-overlapping bookings around now.
func demoPlan(seed uint64, now time.Time, loc *time.Location) demoData {
	d := demoData{
		Nodes: []demoNode{
			{Name: "gpu-a100-01", Model: "NVIDIA A100-SXM4-80GB", GPUs: 8, MemoryMiB: 81920, HomeTeam: "Vision",
				MIG: &demoMIG{GPU: 7, Profiles: []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}}},
			{Name: "gpu-h100-01", Model: "NVIDIA H100 80GB HBM3", GPUs: 8, MemoryMiB: 81559, HomeTeam: "NLP"},
			{Name: "gpu-l40s-01", Model: "NVIDIA L40S", GPUs: 8, MemoryMiB: 46068, HomeTeam: "Robotics"},
		},
		OutOfService: []demoOutOfService{{Node: "gpu-l40s-01", Index: 7, Reason: "Fan failure; RMA opened with the vendor (ticket #4711)"}},
		Teams:        []string{"Vision", "NLP", "Robotics"},
		Users: []demoUser{
			{Email: "admin@example.org", Name: "Priya Raman", Language: "en", Admin: true},
			{Email: "wang.lei@example.org", Name: "王磊", Language: "zh-CN", TimeZone: "Asia/Shanghai", Team: "Vision", Lead: true},
			{Email: "anna.schmidt@example.org", Name: "Anna Schmidt", Language: "en", TimeZone: "Europe/Berlin", Team: "Vision"},
			{Email: "chen.jing@example.org", Name: "陈静", Language: "zh-CN", TimeZone: "Asia/Shanghai", Team: "Vision"},
			{Email: "lucas.martin@example.org", Name: "Lucas Martin", Language: "en", Team: "Vision"},
			{Email: "sarah.johnson@example.org", Name: "Sarah Johnson", Language: "en", Team: "NLP", Lead: true},
			{Email: "li.na@example.org", Name: "李娜", Language: "zh-CN", TimeZone: "Asia/Shanghai", Team: "NLP"},
			{Email: "liu.yang@example.org", Name: "刘洋", Language: "zh-CN", Team: "NLP"},
			{Email: "jonas.weber@example.org", Name: "Jonas Weber", Language: "en", TimeZone: "Europe/Berlin", Team: "NLP"},
			{Email: "zhang.wei@example.org", Name: "张伟", Language: "zh-CN", TimeZone: "Asia/Shanghai", Team: "Robotics", Lead: true},
			{Email: "emily.chen@example.org", Name: "Emily Chen", Language: "en", Team: "Robotics"},
			{Email: "marco.rossi@example.org", Name: "Marco Rossi", Language: "en", TimeZone: "Europe/Berlin", Team: "Robotics"},
		},
	}
	d.Bookings = planBookings(rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), d, now, loc)
	return d
}

// migIndex is the first MIG instance's index on its node.
const migIndex = 64

type interval struct{ start, end time.Time }

// planner places bookings on GPUs so that no two on one GPU overlap.
type planner struct {
	busy map[string][]interval // key: node/index
	out  []demoBooking
}

func gpuKey(node string, index int) string { return node + "/" + strconv.Itoa(index) }

// place moves start forward until [start, start+dur) is free on every GPU.
func (p *planner) place(node string, gpus []int, start time.Time, dur time.Duration) time.Time {
	for moved := true; moved; {
		moved = false
		for _, g := range gpus {
			for _, iv := range p.busy[gpuKey(node, g)] {
				if start.Before(iv.end) && iv.start.Before(start.Add(dur)) {
					start, moved = iv.end.Add(30*time.Minute), true
				}
			}
		}
	}
	return start
}

func (p *planner) add(b demoBooking) {
	for _, g := range b.GPUs {
		k := gpuKey(b.Node, g)
		p.busy[k] = append(p.busy[k], interval{b.Start, b.End})
	}
	p.out = append(p.out, b)
}

// planBookings fills last week (demoBookingsFrom) to four days after today
// with bookings of 1–4 GPUs, mostly by each node's home team, plus one
// booking that is running at now so that the demo always shows an active one.
func planBookings(r *rand.Rand, d demoData, now time.Time, loc *time.Location) []demoBooking {
	local := now.In(loc)
	today := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	from, to := demoBookingsFrom(now, loc), today.AddDate(0, 0, 4)
	p := &planner{busy: map[string][]interval{}}
	hour := now.Truncate(time.Hour)
	p.add(demoBooking{UserEmail: "li.na@example.org", Node: "gpu-h100-01", GPUs: []int{0, 1}, Start: hour.Add(-2 * time.Hour), End: hour.Add(4 * time.Hour), Note: "LLM 微调 (Qwen-7B, LoRA r=16)"})
	// Notebooks on the A100's MIG slices: one running now, more to come.
	p.add(demoBooking{UserEmail: "chen.jing@example.org", Node: "gpu-a100-01", GPUs: []int{migIndex}, Start: hour.Add(-time.Hour), End: hour.Add(3 * time.Hour), Note: "Jupyter 调试 (1g.10gb)"})
	p.add(demoBooking{UserEmail: "lucas.martin@example.org", Node: "gpu-a100-01", GPUs: []int{migIndex + 1, migIndex + 2}, Start: hour.Add(-26 * time.Hour), End: hour.Add(-20 * time.Hour), Note: "CLIP linear probe sweep (2 × 1g.10gb)"})
	p.add(demoBooking{UserEmail: "anna.schmidt@example.org", Node: "gpu-a100-01", GPUs: []int{migIndex + 3}, Start: hour.Add(5 * time.Hour), End: hour.Add(9 * time.Hour), Note: "notebook: SAM segmentation eval"})
	notes := demoNotes()
	durations := []time.Duration{2, 3, 4, 6, 8, 12, 24, 48}
	for _, n := range d.Nodes {
		usable := inServiceIndexes(n, d.OutOfService)
		home, all := teamMembers(d.Users, n.HomeTeam), teamMembers(d.Users, "")
		t := from.Add(time.Duration(r.IntN(6)) * time.Hour)
		for t.Before(to) {
			k := 1 + r.IntN(4)
			first := r.IntN(len(usable) - k + 1)
			gpus := append([]int(nil), usable[first:first+k]...)
			dur := durations[r.IntN(len(durations))] * time.Hour
			start := p.place(n.Name, gpus, t, dur)
			t = t.Add(time.Duration(2+r.IntN(8)) * time.Hour)
			if !start.Before(to) {
				continue
			}
			u := home[r.IntN(len(home))]
			if r.IntN(10) < 3 {
				u = all[r.IntN(len(all))]
			}
			choices := notes[u.Team]
			p.add(demoBooking{UserEmail: u.Email, Node: n.Name, GPUs: gpus, Start: start, End: start.Add(dur), Note: choices[r.IntN(len(choices))]})
		}
	}
	return p.out
}

func inServiceIndexes(n demoNode, oos []demoOutOfService) []int {
	var out []int
	for i := 0; i < n.GPUs; i++ {
		broken := false
		for _, o := range oos {
			broken = broken || (o.Node == n.Name && o.Index == i)
		}
		if !broken && (n.MIG == nil || n.MIG.GPU != i) { // a split GPU is booked through its slices
			out = append(out, i)
		}
	}
	return out
}

// teamMembers returns a team's users; team "" returns everyone in any team.
func teamMembers(users []demoUser, team string) []demoUser {
	var out []demoUser
	for _, u := range users {
		if u.Team != "" && (team == "" || u.Team == team) {
			out = append(out, u)
		}
	}
	return out
}

// demoBookingsFrom is where the demo's bookings begin: the Monday of last
// week (the week the Monday report covers), or three days before today if
// that is earlier. Three days alone left most of last week empty, so the
// demo's weekly reports said "nothing to report".
func demoBookingsFrom(now time.Time, loc *time.Location) time.Time {
	local := now.In(loc)
	threeDays := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, -3)
	if last := models.WeekOf(now, loc).Prev(1).Start; last.Before(threeDays) {
		return last
	}
	return threeDays
}
